"""The distribution name: every install recipe in README.md and docs/ installs *this* project.

On PyPI the name ``linkaudit`` belongs to an unrelated project (a markdown link checker, 0.9.10), so
a recipe installing that name runs somebody else's code in the reader's CI (issue 11). This project
is distributed as the name in ``pyproject.toml``; the command and import package stay ``linkaudit``.
The detector reads each install command a recipe writes (pip, pipx, uv) and PEP 503-normalises
every requirement it names; it is itself tested on lines it must and must not flag.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The git URL recipes install from until the distribution is published.
GIT_URL = "https://github.com/linkaudit/linkaudit"
#: The PyPI name of the unrelated project.
FOREIGN = "linkaudit"

#: An install command and the rest of its line (up to the end of inline code).
_COMMAND = re.compile(
    r"\b(?P<tool>pip3?\s+install|pipx\s+(?:install|run)|uvx|uv\s+tool\s+(?:install|run))\b(?P<rest>[^\n`]*)"
)
#: pip / pipx / uv options whose value is the next token (never a requirement).
_VALUED = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-t",
    "--target",
    "-d",
    "--dest",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--python",
    "--pip-args",
    "--with",
}
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def normalise(name: str) -> str:
    """PEP 503: lower case, every run of ``-``, ``_``, ``.`` one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _tokens(rest: str) -> list[str]:
    try:
        return shlex.split(rest, comments=True)
    except ValueError:  # an unbalanced quote (a TOML string, prose): split on blanks, drop the quotes
        return [t.strip("'\"") for t in rest.split()]


def installed_names(line: str) -> list[str]:
    """The PEP 503-normalised distribution names the install commands on LINE would fetch by name.

    ``pipx run --spec X app`` and ``uvx --from X app`` fetch X (the app is a command); without
    ``--spec``/``--from`` they fetch the app's own name. Paths (``.``), URLs and ``$VARS`` are no
    names.
    """
    names: list[str] = []
    for m in _COMMAND.finditer(line):
        command = re.split(r"&&|\|\||;|\|", m["rest"])[0]  # one command: up to a shell operator
        tokens, tool = _tokens(command), m["tool"].split()[0]
        for flag in ("--spec", "--from"):
            if flag in tokens and tokens.index(flag) + 1 < len(tokens):
                names.append(tokens[tokens.index(flag) + 1])
                break
        else:
            positional, skip = [], False
            for tok in tokens:
                if skip:
                    skip = False
                elif tok in _VALUED:
                    skip = True
                elif not tok.startswith("-"):
                    positional.append(tok)
            names.extend(positional if tool.startswith("pip") and tool != "pipx" else positional[:1])
    found = (_NAME.match(n) for n in names)
    return [normalise(m.group()) for m in found if m and not re.match(r"[a-z+]+://|git\+", m.string)]


def _doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _project_name() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["name"])


@pytest.mark.parametrize(
    "line",
    [
        "pip install linkaudit",
        "python -m pip install -U linkaudit",
        '          python -m pip install "LinkAudit[test]>=0.1"',
        "`pip install --no-deps linkaudit==0.1.0`",
        "pip3 install --index-url https://example.org/simple linkaudit",
        "pipx install Link_Audit  # no: link-audit is another name\npipx install linkaudit",
        "pipx run linkaudit check wheelhouse/",
        "uvx linkaudit check dist/",
        "  'pipx run --spec \"linkaudit\" linkaudit check {dest_dir}',",
        "pip install 'linkaudit @ git+https://github.com/linkaudit/linkaudit'",
    ],
)
def test_the_detector_flags_the_foreign_project(line: str) -> None:
    assert FOREIGN in installed_names(line)


@pytest.mark.parametrize(
    "line",
    [
        'pip install "native-linkage-auditor @ git+https://github.com/linkaudit/linkaudit"',
        "pip install . && .venv/bin/linkaudit check sample_bins/",
        "pip install '.[test]'",
        "pip install -e '.[dev]' && ruff check . && mypy linkaudit",
        "pip install Link_Audit",  # PEP 503: link-audit, another name
        'pipx run --spec "native-linkage-auditor @ git+https://github.com/linkaudit/linkaudit" linkaudit check x',
        'pip install "${{ github.action_path }}"',
        "pip install --no-deps --target DIR torch==2.14.1",
        "`--verify` needs lief: `pip install lief`), and linkaudit",
        "pip install git+https://github.com/linkaudit/linkaudit",
    ],
)
def test_the_detector_passes_this_project_and_others(line: str) -> None:
    assert FOREIGN not in installed_names(line)


def test_no_recipe_installs_the_unrelated_linkaudit() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _doc_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FOREIGN in installed_names(line)
    ]
    assert offenders == [], "these install the unrelated PyPI project 'linkaudit':\n" + "\n".join(offenders)


def test_the_distribution_name_is_not_the_foreign_one_and_the_readme_installs_it() -> None:
    name = _project_name()
    assert normalise(name) != FOREIGN and FOREIGN not in normalise(name).replace("-", "")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'pip install "{name} @ git+{GIT_URL}"' in readme
    assert "distribution name differs" in readme  # the reason is given where the name is


def test_every_named_install_in_the_docs_is_this_distribution_or_a_known_other() -> None:
    """Whatever a recipe installs by name is this project, a tool it documents, or a test dependency."""
    others = {"lief", "torch", "pre-commit", "check-jsonschema"}
    named = {
        n
        for path in _doc_files()
        for line in path.read_text(encoding="utf-8").splitlines()
        for n in installed_names(line)
    }
    assert normalise(_project_name()) in named
    assert named - others - {normalise(_project_name())} == set()
