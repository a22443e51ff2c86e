"""Names the signature tables list but ember does not put behind the parser, each with why."""
EXEMPT = {
    # torch's stubs list only the Storage overloads; its parser also takes set_() and
    # set_(Tensor source[, storage_offset, size, stride]), which the tables would reject
    # (tensor_storage_methods.set_ matches its five overloads itself)
    "Tensor.set_",
    # the sparse constructors take array-like indices and values (lists, NumPy arrays) as
    # tensor.tensor() does; the stubs say Tensor
    "torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
    "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor",
    # their deprecation warnings name the caller's line (stacklevel=2, tested): a checking
    # frame between would take the attribution
    "torch.lu", "torch.lu_solve", "Tensor.lu", "Tensor.lu_solve",
    # torch's Python wrappers read their arguments before the builtin's parser sees them
    # (input.size(), input.is_cuda: AttributeError, IndexError); nn/_functional's unpooling
    # and pooling follow those steps and check with the builtin's parser themselves
    "F.max_unpool2d", "F.max_unpool3d", "F.max_pool3d_with_indices", "F.embedding",
    "F.fold", "F.unfold",
    # the same for the losses: their reduction becomes torch's enum (ValueError) before the
    # builtin's parser runs; nn/_functional's losses check with that parser themselves
    "F.cross_entropy", "F.nll_loss", "F.poisson_nll_loss", "F.ctc_loss",
    "F.cosine_embedding_loss", "F.multilabel_margin_loss", "F.triplet_margin_loss", "F.kl_div",
    # their Scalars take any Number (torch's stubs say float): activation's wrappers check with
    # the builtin's parser themselves, after torch's `if inplace:`
    "F.leaky_relu", "F.leaky_relu_", "F.elu", "F.elu_", "F.rrelu", "F.rrelu_",
    # torch's F.dropout checks p (ValueError) and tests inplace, F.batch_norm tests training,
    # the batch size and eps, before their builtin's parser
    "F.dropout", "F.batch_norm",
}
