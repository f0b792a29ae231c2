"""`python -m toolgen` and the `toolgen` script: the command line, with Ctrl-C one line and exit 130 at any moment."""

import sys


def run() -> None:
    """Run the command line; an interrupt while it loads or parses arguments is one line, never a traceback."""
    try:
        # Imported here, so an interrupt while click and toolgen load is caught below.
        import click

        from toolgen.cli.main import main

        try:
            code = main.main(standalone_mode=False)
        except click.exceptions.Abort:  # click turns Ctrl-C while it parses arguments into Abort
            raise KeyboardInterrupt from None
        except click.ClickException as error:
            error.show()
            code = error.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("toolgen: interrupted; nothing was written\n")
        code = 130
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    run()
