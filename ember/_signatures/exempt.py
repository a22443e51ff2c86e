"""Names the signature tables list but ember does not put behind the parser, each with why."""
EXEMPT = {
    "Tensor.set_": "PyTorch's parser also accepts set_() with no argument (an empty tensor), "
                   "an overload its type stubs leave out",
}
