"""SummaryWriter: PyTorch's TensorBoard writer, its event files written through tensorboardX.

Every add_* accepts ember tensors, NumPy arrays and Python numbers; they are turned into
NumPy arrays here (tensorboardX never sees an ember tensor), then into the same summary
protobufs PyTorch's writer makes.
"""
import itertools
import os
import socket
import time
from datetime import datetime

from . import _summary as S
from ._convert import make_np
from ._graph import graph
from ._tbx import tbx

Event = tbx.proto.event_pb2.Event
SessionLog = tbx.proto.event_pb2.SessionLog

__all__ = ["FileWriter", "SummaryWriter"]


_file_ids = itertools.count()


class FileWriter(tbx.FileWriter):
    """Writes protocol buffers (events, summaries, graphs) to one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        # NOTE: tensorboardX names a file events.out.tfevents.<seconds>.<host><suffix>, so a
        # second writer on the same directory within a second would overwrite the first;
        # TensorBoard's own name adds the process id and a per-process counter, and so do we.
        unique = f".{os.getpid()}.{next(_file_ids)}{filename_suffix}"
        super().__init__(str(log_dir), max_queue, flush_secs, unique)


def _default_bins():
    # TensorFlow's histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0.
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


class SummaryWriter:
    """Writes entries to event files in `log_dir` for TensorBoard to read.

    `log_dir` defaults to runs/<Mon><DD>_<HH>-<MM>-<SS>_<hostname><comment>, PyTorch's name;
    `purge_step` hides events at or after that step left by a crashed run in the same log_dir.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        """The default FileWriter, made again after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory where event files are written."""
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # ------------------------------------------------------------------ scalars
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(S.scalar(tag, scalar_value, new_style, double_precision), global_step,
                  walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """One run (sub-directory `<log_dir>/<main_tag>_<tag>`) per key, all under main_tag."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = self.all_writers[fw_tag] = FileWriter(
                    fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
            fw.add_summary(S.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._add(S.tensor_proto(tag, tensor), global_step, walltime)

    # ------------------------------------------------------------------ histograms
    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """`bins`: 'tensorflow' (the default buckets) or anything np.histogram takes."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(S.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(S.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                  bucket_counts), global_step, walltime)

    # ------------------------------------------------------------------ images and media
    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """One image: CHW (default), HWC or HW, values in [0, 1] (float) or [0, 255] (uint8)."""
        self._add(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (NCHW or NHWC), shown as one grid."""
        self._add(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None):
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != make_np(box_tensor).shape[0]:
                labels = None
        self._add(S.image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                                dataformats=dataformats, labels=labels), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them) rendered to an image."""
        try:
            import matplotlib  # noqa: F401  (optional: matplotlib)
        except ImportError:
            raise ImportError("add_figure needs matplotlib: pip install matplotlib") from None
        img = tbx.utils.figure_to_image(figure, close)
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, img, global_step, walltime, dataformats=fmt)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        self._add(tbx.summary.video(tag, make_np(vid_tensor), fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._add(S.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(tbx.summary.text(tag, text_string), global_step, walltime)

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        arrays = [None if x is None else make_np(x) for x in (vertices, colors, faces)]
        self._add(tbx.summary.mesh(tag, *arrays, config_dict), global_step, walltime)

    # ------------------------------------------------------------------ curves, layouts
    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        labels, predictions = make_np(labels), make_np(predictions)
        weights = None if weights is None else make_np(weights)
        self._add(tbx.summary.pr_curve(tag, labels, predictions, num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        counts = [make_np(x) for x in (true_positive_counts, false_positive_counts,
                                       true_negative_counts, false_negative_counts,
                                       precision, recall)]
        self._add(tbx.summary.pr_curve_raw(tag, *counts, num_thresholds, weights),
                  global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected len(tags) == 3, got {len(tags)}")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout):
        """layout: {category: {chart title: ['Multiline', [tags]] or ['Margin', [v, lo, hi]]}}."""
        self._get_file_writer().add_summary(tbx.summary.custom_scalars(layout))

    # ------------------------------------------------------------------ hparams, embeddings
    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """Hyperparameters and their metrics, in a sub-run (`run_name`, default the time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = S.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_name = run_name or str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for summary in (exp, ssi, sei):
                w_hp.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    @staticmethod
    def _encode(rawstr):
        # Percent-escape what would split or break the embedding's directory name.
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Points (N, D) for the projector, with optional labels and (N, C, H, W) images."""
        emb = tbx.embedding
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = os.path.join(logdir, subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for "
                  "add_embedding()?")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            emb.make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            label_img = make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            emb.make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError(
                "mat should be 2D, where mat.size(0) is the number of data points")
        emb.make_mat(mat, save_path)
        emb.append_pbtxt(metadata, label_img, logdir, subdir, global_step, tag)

    # ------------------------------------------------------------------ graph
    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's graph: its module structure and the ops one forward pass on
        `input_to_model` (a tensor or a tuple of them) runs. `use_strict_trace` is accepted
        for PyTorch's signature; ember records the forward pass as it runs, without jit."""
        graph_def, run_metadata = graph(model, input_to_model, verbose)
        fw = self._get_file_writer()
        walltime = time.time()
        fw.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)
        meta = tbx.proto.event_pb2.TaggedRunMetadata(tag="profiler", run_metadata=run_metadata)
        fw.add_event(Event(tagged_run_metadata=meta), None, walltime)

    # ------------------------------------------------------------------ lifetime
    def flush(self):
        """Write everything pending to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
