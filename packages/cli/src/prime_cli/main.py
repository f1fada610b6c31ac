"""The `prime` command line: accounts, configuration, environments and evaluations."""

from __future__ import annotations

import typer
from rich.markup import escape

from . import cmd_account, cmd_author, cmd_browse, cmd_eval, cmd_install  # noqa: F401 - commands
from .app import app
from .errors import PrimeError
from .output import err


def main(argv: list[str] | None = None) -> int:
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="prime", standalone_mode=False)
    except PrimeError as e:
        err.print(f"error: {escape(e.message)}", highlight=False)
        return e.exit_code
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err.print("aborted")
        return 130
    except typer.TyperException as e:  # the command line did not parse
        if type(e).__name__ == "NoArgsIsHelpError":
            e.show()  # type: ignore[attr-defined]
            return 2
        ctx = getattr(e, "ctx", None)
        where = ctx.command_path if ctx is not None else "prime"
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        err.print(f"error: {escape(message)} (see `{where} --help`)")
        return 2
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
