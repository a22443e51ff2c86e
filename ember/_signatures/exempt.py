"""Names the signature tables list but ember does not put behind the parser, each with why."""
EXEMPT = {
    # torch's stubs list only the Storage overloads; its parser also takes set_() and
    # set_(Tensor source), which the tables would reject
    "Tensor.set_",
}
