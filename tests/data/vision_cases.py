"""Cases shared by scripts/make_vision_refs.py (run on torch + torchvision) and
tests/test_vision_refs.py (run on ember + ember.vision): same inputs, same seeds.

`run(torch, tv)` returns {name: ndarray or str}; names ending in ":repr" hold reprs.
"""
import math

import numpy as np
from PIL import Image


def images():
    rng = np.random.default_rng(0)
    # smooth-ish content so that interpolation differences show, plus noise
    y, x = np.mgrid[0:14, 0:18]
    base = np.stack([128 + 100 * np.sin(x / 4.0 + c) * np.cos(y / 5.0) for c in range(3)])
    noise = rng.integers(-20, 20, size=base.shape)
    u8 = np.clip(base + noise, 0, 255).astype(np.uint8)
    return u8, (u8.astype(np.float32) / 255.0)


def _out(x):
    if isinstance(x, Image.Image):
        return np.array(x)
    if isinstance(x, (tuple, list)):
        return np.stack([_out(i) for i in x])
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def run(torch, tv):
    T, F, ops, utils = tv.transforms, tv.transforms.functional, tv.ops, tv.utils
    IM = T.InterpolationMode
    u8np, f32np = images()
    u8, f32 = torch.from_numpy(u8np.copy()), torch.from_numpy(f32np.copy())
    batch = torch.stack([f32, f32.flip(-1)])
    pil = Image.fromarray(np.ascontiguousarray(u8np.transpose(1, 2, 0)))
    inputs = {"u8": u8, "f32": f32, "pil": pil}
    out = {}

    def put(name, fn):
        out[name] = _out(fn())

    # ---- deterministic functional ops, on every input kind
    for kind, img in inputs.items():
        put(f"resize_bilinear_down:{kind}", lambda: F.resize(img, [11, 13]))
        put(f"resize_bilinear_up:{kind}", lambda: F.resize(img, [20, 25]))
        put(f"resize_bicubic_down:{kind}", lambda: F.resize(img, [9, 11], IM.BICUBIC))
        put(f"resize_bicubic_up:{kind}", lambda: F.resize(img, [17, 23], IM.BICUBIC))
        put(f"resize_nearest:{kind}", lambda: F.resize(img, [9, 27], IM.NEAREST))
        put(f"resize_int_max:{kind}", lambda: F.resize(img, 10, max_size=12))
        put(f"center_crop:{kind}", lambda: F.center_crop(img, [10, 9]))
        put(f"center_crop_big:{kind}", lambda: F.center_crop(img, [17, 21]))
        put(f"crop_oob:{kind}", lambda: F.crop(img, -2, 12, 8, 10))
        for mode in ("constant", "edge", "reflect", "symmetric"):
            put(f"pad_{mode}:{kind}", lambda: F.pad(img, [1, 2, 3, 4], 7, mode))
        put(f"hflip:{kind}", lambda: F.hflip(img))
        put(f"vflip:{kind}", lambda: F.vflip(img))
        put(f"five_crop:{kind}", lambda: F.five_crop(img, [6, 7]))
        put(f"ten_crop:{kind}", lambda: F.ten_crop(img, 5, vertical_flip=True))
        put(f"brightness:{kind}", lambda: F.adjust_brightness(img, 1.3))
        put(f"contrast:{kind}", lambda: F.adjust_contrast(img, 0.6))
        put(f"saturation:{kind}", lambda: F.adjust_saturation(img, 1.7))
        put(f"hue:{kind}", lambda: F.adjust_hue(img, 0.2))
        put(f"gray1:{kind}", lambda: F.rgb_to_grayscale(img))
        put(f"gray3:{kind}", lambda: F.rgb_to_grayscale(img, 3))
        put(f"blur:{kind}", lambda: F.gaussian_blur(img, [5, 3], [1.5, 0.8]))
        put(f"sharpness:{kind}", lambda: F.adjust_sharpness(img, 2.0))
        put(f"autocontrast:{kind}", lambda: F.autocontrast(img))
        put(f"invert:{kind}", lambda: F.invert(img))
        put(f"solarize:{kind}", lambda: F.solarize(img, 100 if kind != "f32" else 0.4))
        if kind != "f32":
            put(f"equalize:{kind}", lambda: F.equalize(img))
            put(f"posterize:{kind}", lambda: F.posterize(img, 3))
        for interp in (IM.NEAREST, IM.BILINEAR):
            tag = f"{interp.value}:{kind}"
            put(f"rotate30_{tag}", lambda: F.rotate(img, 30.0, interp))
            put(f"rotate_expand_{tag}", lambda: F.rotate(img, -50.0, interp, expand=True,
                                                          fill=9))
            put(f"rotate_center_{tag}", lambda: F.rotate(img, 15.0, interp, center=[3, 4]))
            put(f"affine_{tag}", lambda: F.affine(img, 10.0, [2, -3], 0.9, [12.0, 5.0],
                                                  interp, fill=[1, 2, 3]))
            put(f"affine_shear_{tag}", lambda: F.affine(img, 0.0, [0, 0], 1.0, 20.0, interp,
                                                        center=[0, 0]))
            put(f"perspective_{tag}", lambda: F.perspective(
                img, [[0, 0], [17, 0], [17, 13], [0, 13]], [[2, 1], [15, 3], [16, 12],
                                                            [1, 11]], interp))
    put("to_tensor", lambda: F.to_tensor(pil))
    put("to_tensor_np", lambda: F.to_tensor(u8np.transpose(1, 2, 0).copy()))
    put("pil_to_tensor", lambda: F.pil_to_tensor(pil))
    put("to_pil_float", lambda: F.to_pil_image(f32))
    put("to_pil_gray", lambda: F.to_pil_image(u8[:1]))
    put("u8_to_f64", lambda: F.convert_image_dtype(u8, torch.float64))
    put("f32_to_u8", lambda: F.convert_image_dtype(f32, torch.uint8))
    put("u8_to_i32", lambda: F.convert_image_dtype(u8, torch.int32))
    put("i32_to_u8", lambda: F.convert_image_dtype(u8.int() * 1000000, torch.uint8))
    put("normalize", lambda: F.normalize(f32, [0.4, 0.5, 0.6], [0.2, 0.3, 0.25]))
    put("normalize_batch", lambda: F.normalize(batch, [0.5], [0.5]))
    put("resize_batch", lambda: F.resize(batch, [10, 10]))
    put("rotate_batch", lambda: F.rotate(batch, 45.0, IM.BILINEAR))
    put("erase", lambda: F.erase(f32, 2, 3, 4, 5, torch.tensor(0.5)))

    # ---- random transforms: same seed, same draws
    seeded = {
        "RandomCrop": lambda: T.RandomCrop(10, padding=2),
        "RandomCrop_pad_if_needed": lambda: T.RandomCrop(17, pad_if_needed=True, fill=3,
                                                         padding_mode="constant"),
        "RandomResizedCrop": lambda: T.RandomResizedCrop(12),
        "RandomResizedCrop_narrow": lambda: T.RandomResizedCrop([8, 14], scale=(0.5, 0.9),
                                                                ratio=(2.5, 3.0)),
        "RandomHorizontalFlip": lambda: T.RandomHorizontalFlip(),
        "RandomVerticalFlip": lambda: T.RandomVerticalFlip(),
        "RandomRotation": lambda: T.RandomRotation(40),
        "RandomRotation_bilinear": lambda: T.RandomRotation((-20, 60), IM.BILINEAR,
                                                            expand=True, fill=5),
        "RandomAffine": lambda: T.RandomAffine(25, translate=(0.2, 0.1), scale=(0.8, 1.2),
                                               shear=(-10, 10, -5, 5)),
        "ColorJitter": lambda: T.ColorJitter(0.4, 0.4, 0.4, 0.1),
        "RandomGrayscale": lambda: T.RandomGrayscale(0.5),
        "GaussianBlur": lambda: T.GaussianBlur(5, (0.5, 2.0)),
        "RandomPerspective": lambda: T.RandomPerspective(0.4, p=0.8),
        "RandomInvert": lambda: T.RandomInvert(),
        "RandomAdjustSharpness": lambda: T.RandomAdjustSharpness(3.0),
        "AutoAugment": lambda: T.AutoAugment(),
        "AutoAugment_cifar": lambda: T.AutoAugment(T.AutoAugmentPolicy.CIFAR10),
        "AutoAugment_svhn": lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN, fill=7),
        "RandAugment": lambda: T.RandAugment(),
        "RandAugment_bilinear": lambda: T.RandAugment(3, 15, interpolation=IM.BILINEAR),
        "TrivialAugmentWide": lambda: T.TrivialAugmentWide(),
        "RandomApply": lambda: T.RandomApply([T.RandomHorizontalFlip(1.0),
                                              T.ColorJitter(0.5)], p=0.6),
    }
    for name, make in seeded.items():
        transform = make()
        out[f"{name}:repr"] = repr(transform)
        kinds = ("u8", "pil") if "Augment" in name or "Equalize" in name else inputs
        for kind in kinds:
            for seed in range(4 if "Augment" in name else 1 if kind == "f32" else 2):
                torch.manual_seed(seed)
                put(f"{name}:{kind}:{seed}", lambda: transform(inputs[kind]))
    for seed in range(3):
        torch.manual_seed(seed)
        put(f"RandomErasing:{seed}", lambda: T.RandomErasing(p=0.9, value="random")(f32))
        torch.manual_seed(seed)
        put(f"RandomErasing_value:{seed}", lambda: T.RandomErasing(p=0.9, value=(1, 2, 3))(
            f32))
    out["RandomErasing:repr"] = repr(T.RandomErasing())

    # ---- reprs of deterministic transforms
    for name, t in {
        "Compose": T.Compose([T.ToTensor(), T.Normalize((0.5,), (0.2,))]),
        "Resize": T.Resize(32), "Resize_bicubic": T.Resize([4, 5], IM.BICUBIC, antialias=False),
        "CenterCrop": T.CenterCrop(3), "Pad": T.Pad([1, 2], 3, "edge"),
        "FiveCrop": T.FiveCrop(4), "TenCrop": T.TenCrop((3, 4), True),
        "Grayscale": T.Grayscale(3), "ToPILImage": T.ToPILImage(), "PILToTensor":
        T.PILToTensor(), "ConvertImageDtype": T.ConvertImageDtype(torch.float32),
        "Lambda": T.Lambda(lambda x: x), "RandomChoice": T.RandomChoice([T.ToTensor()]),
        "RandomOrder": T.RandomOrder([T.ToTensor(), T.CenterCrop(2)]),
    }.items():
        out[f"{name}:repr"] = repr(t)

    # ---- utils
    grid_in = torch.from_numpy(np.linspace(-1, 2, 5 * 3 * 4 * 6, dtype=np.float32)
                               .reshape(5, 3, 4, 6).copy())
    put("make_grid", lambda: utils.make_grid(grid_in, nrow=2, padding=1, pad_value=0.5))
    put("make_grid_norm", lambda: utils.make_grid(grid_in, normalize=True))
    put("make_grid_range", lambda: utils.make_grid(grid_in, nrow=3, normalize=True,
                                                   value_range=(0.0, 1.0)))
    put("make_grid_each", lambda: utils.make_grid(grid_in, normalize=True, scale_each=True,
                                                  padding=0))
    put("make_grid_gray", lambda: utils.make_grid([grid_in[0, :1], grid_in[1, :1]]))
    boxes = torch.tensor([[1, 2, 10, 12], [5, 5, 20, 18], [0, 0, 17, 13]])
    put("draw_boxes", lambda: utils.draw_bounding_boxes(u8, boxes, width=2))
    put("draw_boxes_fill", lambda: utils.draw_bounding_boxes(
        u8, boxes, colors=["red", (0, 255, 0), "#0000ff"], fill=True))

    # ---- ops
    rng = np.random.default_rng(1)
    xy = rng.uniform(0, 40, size=(60, 2))
    wh = rng.uniform(2, 15, size=(60, 2))
    b = torch.from_numpy(np.concatenate([xy, xy + wh], 1).astype(np.float32))
    s = torch.from_numpy(rng.uniform(0, 1, size=60).astype(np.float32))
    cls = torch.from_numpy(rng.integers(0, 3, size=60))
    put("box_iou", lambda: ops.box_iou(b[:7], b[7:12]))
    put("box_area", lambda: ops.box_area(b))
    put("nms", lambda: ops.nms(b, s, 0.3))
    put("nms_hi", lambda: ops.nms(b, s, 0.7))
    put("batched_nms", lambda: ops.batched_nms(b, s, cls, 0.3))
    for fin in ("xyxy", "xywh", "cxcywh"):
        for fout in ("xyxy", "xywh", "cxcywh"):
            put(f"box_convert_{fin}_{fout}", lambda: ops.box_convert(b[:5], fin, fout))
    put("clip_boxes", lambda: ops.clip_boxes_to_image(b - 5, (30, 35)))
    put("remove_small", lambda: ops.remove_small_boxes(b, 8.0))
    feat = torch.from_numpy(rng.standard_normal((2, 3, 12, 14)).astype(np.float32))
    rois = torch.tensor([[0, 1.0, 1.5, 9.0, 8.0], [1, -2.0, 3.0, 5.5, 14.0],
                         [0, 3.3, 2.2, 3.9, 2.8], [1, 0.0, 0.0, 13.0, 11.0]])
    put("roi_align", lambda: ops.roi_align(feat, rois, (3, 4)))
    put("roi_align_aligned", lambda: ops.roi_align(feat, rois, 2, spatial_scale=0.5,
                                                   sampling_ratio=2, aligned=True))
    put("roi_align_list", lambda: ops.roi_align(feat, [rois[:2, 1:], rois[2:, 1:]], [2, 2],
                                                sampling_ratio=3))

    # ---- FakeData (seeded per index)
    fake = tv.datasets.FakeData(size=3, image_size=(3, 5, 6), num_classes=7)
    for i in range(3):
        img, target = fake[i]
        out[f"fakedata:{i}"] = np.array(img)
        out[f"fakedata_target:{i}"] = np.array(target)
    out["fakedata:repr"] = repr(fake)
    return out


UINT8_ATOL = 1      # float32 rounding may move an integer result by one level
FLOAT_ATOL = 2e-5
_ = math
