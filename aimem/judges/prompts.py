"""Find, parse and strictly render the versioned prompt files in ``prompts/``.

A prompt file is Markdown with a small front-matter header and two sections::

    ---
    name: interpret
    version: interpret.v2
    variables: [nonce, content]
    ---
    ## system
    Static instructions (first, so providers can cache the prefix).
    ## user
    <memory-data id="{{nonce}}">
    {{content}}
    </memory-data id="{{nonce}}">

Rendering is strict (a missing or unexpected variable raises) and happens in one
pass, so a value that itself contains ``{{content}}`` is never expanded again.

Untrusted text travels inside data blocks whose opening and closing tags carry a
per-request random nonce: content cannot close a block it cannot name.
:func:`new_nonce` makes the nonce and :func:`extract_data_block` reads a block back
(the offline OpenAI stub in :mod:`aimem.testing` uses it).

Example:
    >>> prompt = load_prompt("interpret", "v2")
    >>> prompt.version
    'interpret.v2'
"""

from __future__ import annotations

import functools
import re
import secrets
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from aimem.exceptions import ValidationError

__all__ = [
    "DEFAULT_PROMPT_VERSION",
    "PromptTemplate",
    "RenderedPrompt",
    "extract_data_block",
    "load_prompt",
    "new_nonce",
    "parse_prompt",
    "prompt_dirs",
]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.DOTALL)
_SECTION = re.compile(r"^## (system|user)[ \t]*$", re.MULTILINE)
_ANY_DATA_TAG = re.compile(r'<[a-z][a-z-]* id="([0-9a-f]{16,})">')


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered prompt: the system text (static) and the user text (carries the data)."""

    system: str
    user: str

    @property
    def messages(self) -> list[dict[str, str]]:
        """The prompt as chat messages, system first."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
        ]


@dataclass(frozen=True)
class PromptTemplate:
    """One parsed prompt file.

    Attributes:
        name: the prompt's name, e.g. ``"interpret"``.
        version: the full version recorded on every memory, e.g. ``"interpret.v2"``.
        variables: the names :meth:`render` requires, no more and no fewer.
        system: the static system text.
        user: the user text with ``{{placeholders}}``.
        source: where the file was read from.
        scale: the integer scale components are asked on (header ``scale: 5``, from
            interpret.v3), mapped by the judge to DESIGN's 0..0.25; None asks for the
            fractions themselves.
    """

    name: str
    version: str
    variables: tuple[str, ...]
    system: str
    user: str
    source: str = "<string>"
    scale: int | None = None

    def render(self, **values: str) -> RenderedPrompt:
        """Fill every placeholder; raise on a missing, unexpected or non-string value.

        Raises:
            ValidationError: the values do not match ``variables`` exactly.
        """
        missing = sorted(set(self.variables) - values.keys())
        unexpected = sorted(values.keys() - set(self.variables))
        if missing or unexpected:
            raise ValidationError(
                f"Prompt {self.version}: missing variables {missing}, unexpected {unexpected}; "
                f"it takes exactly {list(self.variables)}"
            )
        not_text = sorted(k for k, v in values.items() if not isinstance(v, str))
        if not_text:
            raise ValidationError(f"Prompt {self.version}: variables {not_text} must be str")

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)

        return RenderedPrompt(system=fill(self.system), user=fill(self.user))


def parse_prompt(text: str, source: str = "<string>") -> PromptTemplate:
    """Parse a prompt file's text; the header must declare exactly the placeholders used.

    Raises:
        ValidationError: the header or the sections are malformed.
    """
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise ValidationError(f"{source}: a prompt file starts with a '---' front-matter header")
    header = _parse_header(match.group(1), source)
    system, user = _split_sections(text[match.end() :], source)
    declared = tuple(_parse_list(header.get("variables", "")))
    used = set(_PLACEHOLDER.findall(system + user))
    if used != set(declared):
        raise ValidationError(
            f"{source}: header variables {sorted(declared)} differ from the placeholders "
            f"used {sorted(used)}"
        )
    try:
        name, version = header["name"], header["version"]
    except KeyError as exc:
        raise ValidationError(f"{source}: the header needs '{exc.args[0]}:'") from None
    scale = header.get("scale")
    if scale is not None and not (scale.isdigit() and 1 <= int(scale) <= 100):
        raise ValidationError(f"{source}: 'scale:' must be an integer from 1 to 100")
    return PromptTemplate(
        name, version, declared, system, user, source, int(scale) if scale else None
    )


def _parse_header(block: str, source: str) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValidationError(f"{source}: header line {line!r} is not 'key: value'")
        header[key.strip()] = value.strip().strip("\"'")
    return header


def _parse_list(value: str) -> list[str]:
    items = value.strip().removeprefix("[").removesuffix("]").split(",")
    return [item.strip().strip("\"'") for item in items if item.strip()]


def _split_sections(body: str, source: str) -> tuple[str, str]:
    parts = _SECTION.split(body)
    # split() yields [preamble, "system", text, "user", text] for a well-formed file.
    if [p for i, p in enumerate(parts) if i % 2] != ["system", "user"] or parts[0].strip():
        raise ValidationError(f"{source}: expected a '## system' then a '## user' section")
    return parts[2].strip(), parts[4].strip()


def prompt_dirs() -> list[Traversable]:
    """Where prompt files are looked up, in order.

    First the copy packaged in the wheel (hatch force-includes ``prompts/`` as
    ``aimem/_prompts``), then the checkout's ``prompts/``, because an editable
    install does not apply force-include.
    """
    return [
        resources.files("aimem").joinpath("_prompts"),
        Path(__file__).resolve().parents[2] / "prompts",
    ]


#: The prompt version judges use unless told otherwise.
DEFAULT_PROMPT_VERSION = "v4"


def load_prompt(name: str = "interpret", version: str = DEFAULT_PROMPT_VERSION) -> PromptTemplate:
    """Load and parse ``<name>.<version>.md`` (cached).

    Raises:
        ValidationError: no such prompt in any of :func:`prompt_dirs`, or it is malformed.
    """
    return _load(name, version)  # positional, so every spelling of a call shares one entry


@functools.cache
def _load(name: str, version: str) -> PromptTemplate:
    filename = f"{name}.{version}.md"
    dirs = prompt_dirs()
    for directory in dirs:
        candidate = directory.joinpath(filename)
        if candidate.is_file():
            template = parse_prompt(candidate.read_text(encoding="utf-8"), str(candidate))
            if (template.name, template.version) != (name, f"{name}.{version}"):
                raise ValidationError(
                    f"{candidate}: header says {template.name!r}/{template.version!r}, "
                    f"expected {name!r}/'{name}.{version}'"
                )
            return template
    looked = ", ".join(str(d) for d in dirs)
    raise ValidationError(
        f"No prompt {filename!r} (looked in {looked}): check the prompt version, "
        "or reinstall aimem, whose wheel ships the prompts"
    )


def new_nonce(*texts: str) -> str:
    """A random hex id for data-block tags, absent from every text it will delimit."""
    while True:
        nonce = secrets.token_hex(8)
        if not any(nonce in text for text in texts):
            return nonce


def extract_data_block(text: str, tag: str = "memory-data", nonce: str | None = None) -> str | None:
    """Return the body of ``<tag id="nonce">...</tag id="nonce">`` in a rendered prompt.

    Without ``nonce`` the first data tag in ``text`` names it: rendered prompts put
    static text before their first block, so a forged tag inside data can never come
    first. Returns None when there is no such block.
    """
    if nonce is None:
        first = _ANY_DATA_TAG.search(text)
        if first is None:
            return None
        nonce = first.group(1)
    opening, closing = f'<{tag} id="{nonce}">\n', f'\n</{tag} id="{nonce}">'
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else text[start + len(opening) : end]
