"""Names the signature tables list but ember does not put behind the parser, each with why."""
EXEMPT = {
}
