"""A first-person note told in the third person: "I moved" -> "The user moved".

An interpretation is read back later by an agent (and by people, in the CLI), out of the
conversation it came from, so "I" must say who. English pronouns become "the user" at
their first mention in a sentence and "they" / "their" after it, with the verb agreeing
("I live" -> "the user lives", "I'm" -> "the user is"; "we" is "the user and others");
a transcript's speaker label
("Caroline: I went ...") names the speaker instead. Japanese 私 / 僕 / 俺 before a particle
become ユーザー. Quoted words stay as they were said. Anything else is left in the user's
own words: the raw content is always stored beside the interpretation, so nothing is lost.

Pure text: the offline judge uses it, and so does the migration that cleans the
interpretations earlier versions stored with slot labels.

Example:
    >>> third_person("I live in Sendai and my sister visits me often.")
    'The user lives in Sendai and their sister visits them often.'
    >>> third_person("Caroline: I went to a support group.")
    'Caroline went to a support group.'
"""

from __future__ import annotations

import re

__all__ = ["speaker_label", "third_person"]

#: A transcript's speaker label; "User:" is the store's own framing.
_LABEL = re.compile(r"([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?): +(?=\S)")
#: Labels that open a remark, not a speaker's turn: "Sorry: ...", "Update: ...".
_NOT_A_SPEAKER = re.compile(
    r"(?:sorry|oops|correction|update|note|edit|fyi|btw|ps|reminder|news|ok|okay|so|also|"
    r"actually|heads up|quick update|quick note|small update|big news|good news|bad news|"
    r"original|question|answer|q|a|todo|warning|important|tip|example|re|subject)$",
    re.I,
)

_PRONOUN = re.compile(
    r"(?<![\w'’/-])(?:I(?:['’](?:m|ve|d|ll))?|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|"
    r"[Ww]e(?:['’](?:re|ve|d|ll))?|[Uu]s|[Oo]ur|[Oo]urs|[Oo]urselves)(?![\w'’/-])"
)
_QUOTED = re.compile(
    r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|「[^」]*」|『[^』]*』|(?<![\w'])'(?:[^'\n]|'(?=\w))*'(?!\w)"
)
_SENTENCE_END = re.compile(r"[.!?。！？]\s+|\n")
_WORD = re.compile(r"\s*([A-Za-z][A-Za-z'’-]*)")

#: Words between "I" and its verb that leave the verb as it is ("I really like ...").
_ADVERBS = frozenset(
    "also really just usually always never still often now recently finally actually only "
    "sometimes already currently mostly definitely totally absolutely honestly generally "
    "rarely seldom even then once occasionally mainly normally typically truly personally "
    "probably certainly literally basically seriously barely hardly nearly almost simply "
    "no longer".split()
)
#: Verbs that agree as they are: modals, past forms and forms that read alike either way.
_KEPT = frozenset(
    "can could will would shall should may might must can't couldn't won't wouldn't "
    "shouldn't mustn't didn't wasn't was did had got went made took saw came bought sold "
    "left lost found gave told said thought felt knew met ran began became broke wrote drove "
    "flew grew ate drank slept kept paid spent sent built taught caught brought fought won "
    "put cut quit read set hit let hurt cost shut bet spread sat stood heard held lay led "
    "meant rode rose sang sank shook shot slid spoke stole stuck swam threw understood woke "
    "wore forgot chose froze hid bit fell drew gotta gonna wanna used ought".split()
)
_IRREGULAR = {
    "am": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "ain't": "isn't",
    "am not": "is not",
    "be": "is",
}
#: "we" and its contractions: (after "the user and others", later in the sentence).
_WE = {
    "we": ("", "they"),
    "we're": (" are", "they're"),
    "we've": (" have", "they've"),
    "we'd": (" would", "they'd"),
    "we'll": (" will", "they'll"),
    "us": ("", "them"),
}
#: After a name or number these are no pronoun: "World War I", "Part I", "Type I".
_NUMERAL_BEFORE = re.compile(
    r"(?:War|Part|Chapter|Act|Phase|Level|Type|Class|Section|Volume|Vol\.?|Grade|Stage|Tier|"
    r"Henry|Elizabeth|Louis|George|Charles|James|Richard|Edward|William|Mary|Pope|Plan|Book|"
    r"Season|Episode|Appendix|Figure|Table|Article|Schedule|Form)\s$"
)
_JA_FIRST_PERSON = re.compile(
    r"(?:私|わたし|わたくし|僕|ぼく|俺|おれ|あたし)(?!たち|達|ども|共|立|的|服|物|鉄|用|学|語|室|有|事|生|見|心)"
    r"(?=[はがのもをにへとでや、]|自身)"
)


def speaker_label(text: str) -> tuple[str | None, str]:
    """``(speaker, words)`` for a transcript line ("Caroline: ..."), else ``(None, text)``.

    "User: ..." is the store's own framing, not a speaker: ``("", words)``.
    """
    m = _LABEL.match(text)
    if m is None:
        return None, text
    label = m.group(1)
    if label.lower() == "user":
        return "", text[m.end() :]
    if _NOT_A_SPEAKER.match(label):
        return None, text
    return label, text[m.end() :]


def third_person(text: str) -> str:
    """``text`` with its first person told in the third person (module docstring).

    Never raises; returns ``text`` unchanged when it has nothing to change.
    """
    try:
        speaker, words = speaker_label(text)
        who = speaker or "the user"
        if speaker is not None:
            text = words
        told = _english(_japanese(text, speaker or "ユーザー"), who, labelled=speaker is not None)
        if speaker and not told.startswith(speaker):
            return f"{speaker}: {told}"  # the words that follow are still the speaker's
        return told
    except Exception:  # a rule's bug must not lose an interpretation: keep the words
        return text


def _japanese(text: str, who: str) -> str:
    return _JA_FIRST_PERSON.sub(who, text)


def _english(text: str, who: str, *, labelled: bool) -> str:
    """First-person pronouns outside quotes, sentence by sentence (see the module docstring)."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    starts = {0} | {m.end() for m in _SENTENCE_END.finditer(text)}
    out: list[str] = []
    last = 0
    mentioned_at = -1  # the start of the sentence where the user was last named
    for m in _PRONOUN.finditer(text):
        at = m.start()
        if any(a <= at < b for a, b in quoted):
            continue
        if m.group() == "I" and _NUMERAL_BEFORE.search(text[max(0, at - 12) : at]):
            continue
        sentence = max(s for s in starts if s <= at)
        first = mentioned_at != sentence
        word, skip = _replacement(m.group(), text, m.end(), who, first=first)
        if word is None:
            continue
        mentioned_at = sentence
        if at == sentence or (labelled and at == 0):
            word = word[:1].upper() + word[1:]
        out.append(text[last:at])
        out.append(word)
        last = m.end() + skip
    out.append(text[last:])
    return "".join(out)


def _replacement(
    pronoun: str, text: str, end: int, who: str, *, first: bool
) -> tuple[str | None, int]:
    """What ``pronoun`` becomes, and how many following characters it swallows (a verb)."""
    low = pronoun.lower().replace("’", "'")
    owner = who + "'s" if not who.endswith("s") else who + "'"
    if low in ("i", "i'm", "i've", "i'd", "i'll"):
        subject = who if first else "they"
        if low == "i":
            verb, skip = _agreeing(text, end, singular=first)
            return subject + verb, skip
        if low == "i'm":
            return subject + (" is" if first else " are"), 0
        if low == "i've":
            return subject + (" has" if first else " have"), 0
        if low == "i'll":
            return subject + " will", 0
        nxt = _WORD.match(text, end)
        perfect = nxt is not None and re.fullmatch(
            r"been|got|gone|had|done|seen|[a-z]+ed", nxt.group(1).lower()
        )
        return subject + (" had" if perfect else " would"), 0
    if low == "me":
        return (who if first else "them"), 0
    if low == "my":
        return (owner if first else "their"), 0
    if low == "mine":
        return (owner if first else "theirs"), 0
    if low == "myself":
        return "themselves", 0
    if pronoun in ("US", "Us") and not text[end : end + 1].isspace():
        return None, 0
    if pronoun == "US":
        return None, 0  # the country
    if low in _WE:
        group, they = _WE[low]
        return (f"{who} and others{group}" if first else they), 0
    if low in ("our", "ours"):
        return (owner if first else ("their" if low == "our" else "theirs")), 0
    if low == "ourselves":
        return "themselves", 0
    return None, 0


def _agreeing(text: str, end: int, *, singular: bool) -> tuple[str, int]:
    """The words after "I" up to and including its verb, made to agree with the new subject.

    Returns the replacement text (starting with its space) and how many characters of
    ``text`` after ``end`` it stands for.
    """
    pos = end
    words: list[str] = []
    for _ in range(4):
        m = _WORD.match(text, pos)
        if m is None:
            return "", 0
        word = m.group(1)
        low = word.lower().replace("’", "'")
        if low in _ADVERBS or (low in ("kind", "sort") and text[m.end() :].startswith(" of")):
            words.append(m.group(0))
            pos = m.end()
            if low in ("kind", "sort"):
                of = _WORD.match(text, pos)
                assert of is not None
                words.append(of.group(0))
                pos = of.end()
            continue
        if not singular:
            if low in ("am", "was"):
                fixed = {"am": "are", "was": "were"}[low]
                return "".join(words) + m.group(0).replace(word, fixed), pos - end + len(m.group(0))
            return "", 0
        new = _third_singular(low)
        if new is None or (word != low and not word[:1].isupper()):
            return "", 0
        if word[:1].isupper() and word[1:].islower():
            new = new[:1].upper() + new[1:]
        return "".join(words) + m.group(0).replace(word, new), pos - end + len(m.group(0))
    return "", 0


def _third_singular(verb: str) -> str | None:
    """``verb`` for "he/she/the user", or None when it is no present-tense verb to change."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb in _KEPT or verb.endswith(("ed", "n't", "'d", "'ll")) or "'" in verb:
        return None
    if not verb.isalpha() or len(verb) < 2:
        return None
    if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"
