"""The intermediate representation: the IR, lowering sources into it, and the names it gives."""
