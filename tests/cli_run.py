"""Running the mcugen CLI in-process from tests, and the one-line-error contract."""

from __future__ import annotations

from click.testing import CliRunner, Result

from mcugen.cli import main


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_one_line_error(result: Result, *fragments: str) -> None:
    """Exit status 2, one 'error: ...' line on stderr holding every fragment, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
