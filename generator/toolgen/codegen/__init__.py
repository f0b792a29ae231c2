"""Code generation: rendering the package from the IR, formatting, and the targets it writes."""
