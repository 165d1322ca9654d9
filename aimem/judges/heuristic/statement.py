r"""What a memory states: its reading (subject, markers, slots), its restatement, its recall words.

``read`` turns a text into a ``Reading``: whose fact it is (the user, "my sister", a
named pet), its markers (change, end, addition, hypothetical) and the slots it fills
(residence, job, schedule, dose, pet...), with the vocabularies of ``slots.py``;
``supersession.py`` compares readings. ``restate`` is the offline interpretation: the
content told in the third person (``aimem.text.restatement``), nothing added. Later questions
rarely repeat a memory's words ("Where is the user based?" for "We moved to Sapporo."),
so ``recall_terms`` names a recognised slot in the generic words such questions use, in
English and Japanese: they are indexed with the memory but never shown.

Example:
    >>> print(restate("We moved to Portland last month."))
    The user and others moved to Portland last month.
    >>> recall_terms("We moved to Portland last month.").split()[:4]
    ['residence', 'live', 'lives', 'living']
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache

from aimem.judges.heuristic import slots as slot_words
from aimem.judges.heuristic.cues import CJK_RUN
from aimem.text.restatement import restate
from aimem.text.stemmer import stem

__all__ = [
    "Reading",
    "Slot",
    "content_tokens",
    "fills_slot",
    "read",
    "recall_kinds",
    "recall_terms",
    "restate",
    "says_change",
    "slot_terms",
    "subject_of",
]

#: Only the start of a long text is read: a memory states its point early.
READ_CHARS = 2000

#: Slot kind -> the words questions about it use (English, Japanese), for recall only.
_RECALL_WORDS: dict[str, tuple[str, str]] = {
    "residence": (
        "residence live lives living home address based city town area place moved",
        "住まい 住んでいる 住所 拠点 引っ越し",
    ),
    "job": (
        # "What does the user do?" has no other word than its verb
        "job work works working occupation career employer company role profession do does",
        "仕事 職業 勤務先 職種 会社",
    ),
    "dose": ("medication medicine takes dose dosage prescription", "服薬 薬 用量 処方"),
    "allergy": ("allergy allergies allergic", "アレルギー"),
    "pet": ("pet pets animal", "ペット 動物 飼っている"),
    "possession": ("belongings owns uses", "持ち物 所有"),
    "relationship": (
        "relationship partner dating married spouse status",
        "交際 恋人 結婚 パートナー",
    ),
    "family": ("family relative name", "家族 名前"),
    "schedule": ("schedule appointment date time when booked", "予定 日時 予約"),
    "birthday": ("birthday born date", "誕生日 生年月日"),
    "commute": ("commute gets work travel", "通勤 通勤手段"),
    "work hours": ("working hours shifts days worked", "勤務時間 勤務日 シフト"),
    "habit": ("habit routine regularly often", "習慣 日課 頻度"),
}


def fills_slot(text: str) -> bool:
    """Whether ``text`` states a standing fact of a known slot (residence, job, pet, ...)."""
    try:
        return bool(read(" ".join(slot_words.CONTROL.sub(" ", text[:READ_CHARS]).split())).slots)
    except Exception:
        return False


#: A way of eating: "What diet does the user follow?" shares no word with "I'm vegetarian".
_DIET = re.compile(
    r"\b(?:vegetarian|vegan|pescatarian|pescetarian|gluten[- ]free|dairy[- ]free|lactose"
    r"|halal|kosher|keto|paleo|plant[- ]based|teetotal|teetotaler|coeliac|celiac)\b"
    r"|ベジタリアン|ヴィーガン|ビーガン|菜食|グルテンフリー|乳糖"
)
_DIET_WORDS = ("diet eats eating food meals", "食事 食生活 食べ物")


def recall_terms(content: str) -> str:
    """The words questions about ``content``'s slots use, in English and Japanese ("" if none).

    Indexed with the memory, never shown: "We moved to Sapporo." shares no word with
    "Where does the user live?", and an English question finds 東京に住んでいます by them.
    """
    try:
        text = unicodedata.normalize("NFKC", str(content)[:READ_CHARS])
        kinds = {
            slot.kind for slot in read(" ".join(slot_words.CONTROL.sub(" ", text).split())).slots
        }
    except Exception:
        return ""
    words = [" ".join(words) for kind, words in _RECALL_WORDS.items() if kind in kinds]
    if _DIET.search(text.lower()):
        words.append(" ".join(_DIET_WORDS))
    return " ".join(words)


def recall_kinds(terms: str) -> frozenset[str]:
    """The slot kinds whose words ``recall_terms`` put in ``terms`` (a stored memory's)."""
    return frozenset(kind for kind, (en, _) in _RECALL_WORDS.items() if en in terms)


def slot_terms(content: str) -> str:
    """The generic words naming the slots ``content`` fills ("" when none is recognised).

    A related lookup searches with them too: "We moved to Sapporo." shares no word with
    "I live in Sendai.", but both name the residence, so the judge gets to see the
    memory the new one may supersede.
    """
    return recall_terms(content)


@dataclass(frozen=True)
class Slot:
    """One slot a text fills: what kind, for which thing (param), with which value."""

    kind: str
    param: frozenset[str] = frozenset()
    value: frozenset[str] = frozenset()
    label: str = ""
    changed: bool = False


@dataclass(frozen=True)
class Reading:
    """What the detector needs to know about one text, computed once."""

    text: str
    low: str
    ja: bool
    subject: str
    tokens: frozenset[str]
    entities: frozenset[str]
    seq: tuple[str, ...]
    clauses: tuple[tuple[str, frozenset[str]], ...]
    additive: bool
    unsure: bool
    future: bool
    change: bool
    slots: tuple[Slot, ...] = field(default=())

    def slot(self, kind: str) -> Slot | None:
        """The first slot of this kind, if the text fills one."""
        return next((s for s in self.slots if s.kind == kind), None)


# --- reading a text ---------------------------------------------------------------------


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    """Read ``text`` (raw or already restated) into subject, markers, tokens and slots."""
    text = _original(unicodedata.normalize("NFKC", text[:READ_CHARS]))
    text = " ".join(slot_words.CONTROL.sub(" ", text).split())
    low = text.lower()
    ja = bool(CJK_RUN.search(low))
    subject = _subject(text, low, ja)
    clauses = tuple((c, content_tokens(c)) for c in slot_words.CLAUSE.split(low) if c.strip())
    tokens = frozenset().union(*(t for _, t in clauses)) if clauses else frozenset()
    reading = Reading(
        text=text,
        low=low,
        ja=ja,
        subject=subject,
        tokens=tokens,
        entities=_entities(text, tokens),
        seq=tuple(slot_words.SEQ_TOKEN.findall(low)) if not ja else tuple(low),
        clauses=clauses,
        additive=bool(slot_words.ADDITIVE.search(low)),
        unsure=bool(slot_words.HYPOTHETICAL.search(low) or slot_words.QUESTION.search(low)),
        future=bool(slot_words.FUTURE.search(low)),
        change=bool(
            slot_words.CHANGE.search(low)
            or slot_words.END.search(low)
            or slot_words.RESUME.search(low)
        ),
    )
    return replace(reading, slots=_slots(reading))


@lru_cache(maxsize=16_384)
def subject_of(text: str) -> str:
    """Whose fact ``text`` states, as ``read`` would say, without the rest of the reading.

    ``"user"``, ``"other:<relation>"`` ("my sister ...") or ``"name:<name>"``; cheap enough
    for every search hit (``aimem.retrieval.siblings``).
    """
    try:
        text = _original(unicodedata.normalize("NFKC", text[:READ_CHARS]))
        text = " ".join(slot_words.CONTROL.sub(" ", text).split())
        low = text.lower()
        return _subject(text, low, bool(CJK_RUN.search(low)))
    except Exception:
        return "user"


def says_change(text: str) -> bool:
    """Whether ``text`` says something changed, ended or resumed, as ``read`` would say.

    Three patterns, not a whole reading: cheap enough for every search hit.
    """
    low = text[:READ_CHARS].lower()
    return bool(
        slot_words.CHANGE.search(low) or slot_words.END.search(low) or slot_words.RESUME.search(low)
    )


def _original(text: str) -> str:
    """The user's own words inside a restatement ("... Original: "..."") or ``text`` itself."""
    m = slot_words.ORIGINAL.search(text)
    if m:
        return m.group("en") if m.group("en") is not None else m.group("ja") or ""
    return (
        slot_words.RESTATED.sub("", text.strip(), count=1)
        if text.lower().startswith("user:")
        else text
    )


#: A relation named and nothing more: "... is Anika Shah", "... is called Ben".
_NAMED_AS = re.compile(
    r"\s+(?:is|'s)\s+(?:called\s+|named\s+)?[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*\s*[.!]?\s*$"
)


#: Capitalised at the start, yet nobody in particular: "Someone nicked my bike".
_ANYONE = frozenset("someone somebody anyone anybody nobody everyone everybody".split())


def _subject(text: str, low: str, ja: bool) -> str:
    """``"user"``, ``"other:<relation>"`` or ``"name:<name>"``: whose fact this is."""
    low = slot_words.FILLER.sub("", low)
    text = text[len(text) - len(low) :] if len(low) <= len(text) else text
    if slot_words.FOR_OTHER.search(low):
        return "other:beneficiary"
    if ja and not low[:1].isascii():
        head = slot_words.JA_LEAD.sub("", low)
        if slot_words.JA_WITH.search(head[:16]):
            return "user"
        m = slot_words.OTHER_SUBJECT_JA.match(head)
        return f"other:{m.group('rel')}" if m else "user"
    if slot_words.AND_I.match(low):
        return "user"
    m = slot_words.OTHER_SUBJECT_EN.match(low) or slot_words.BARE_RELATION_EN.match(low)
    if m and _NAMED_AS.match(text[m.end() :]):
        return "user"  # "My manager is Anika Shah": who the user's manager is
    if m:
        return f"other:{(m.group('rel') or m.group('rel2')).split()[-1]}"
    if slot_words.USER_START.match(low) or slot_words.AGENT_EN.match(low):
        return "user"
    m = slot_words.NAMED.match(text)
    if m and m.group("name").lower() not in slot_words.GENERIC | _ANYONE:
        word = m.group("name").lower()
        if not (slot_words.EVENT.fullmatch(word) or slot_words.VERB_LIKE.fullmatch(word)):
            return f"name:{word}"
    return "user"


def _entities(text: str, tokens: frozenset[str]) -> frozenset[str]:
    """Tokens that name one particular thing: mid-sentence capitals, models, concepts, katakana."""
    out = {
        stem(m.group().lower().removesuffix("'s")) for m in slot_words.MID_CAPITAL.finditer(text)
    }
    out.update(
        t
        for t in tokens
        if t.startswith("#")
        or slot_words.KATAKANA.fullmatch(t)
        or (any(c.isdigit() for c in t) and any(c.isalpha() for c in t))
    )
    for pattern in slot_words.DRUG:
        out.update(stem(m.group()) for m in pattern.finditer(text.lower()) if len(m.group()) > 4)
    return frozenset(out - slot_words.GENERIC) & (tokens | out)


def content_tokens(text: str) -> frozenset[str]:
    """Content tokens (stemmed English words, Japanese kanji/katakana runs) plus concepts."""
    words = (t.removesuffix("'s") for t in slot_words.EN_TOKEN.findall(text))
    out = {stem(t) for t in words if t not in slot_words.GENERIC}
    out = {t for t in out if t not in slot_words.GENERIC and len(t) > 1}
    out.update(k for k in slot_words.KATAKANA.findall(text) if k not in slot_words.GENERIC_JA)
    out.update(k for k in slot_words.KANJI.findall(text) if k not in slot_words.GENERIC_JA)
    if slot_words.CONCEPTS_PROBE.search(text):
        out.update(name for name, pattern in slot_words.CONCEPTS if pattern.search(text))
    return frozenset(out)


def _values(text: str, low: str, after: int = 0) -> frozenset[str]:
    """Specific values in the clause: capitalised names, models and numbers, Japanese runs."""
    out: set[str] = set()
    for m in slot_words.CAPITAL.finditer(text, after):
        if m.start() == 0 or re.search(r"[.!?:;—–-]\s*$", text[: m.start()]):
            continue
        words = [w.strip(".'&-") for w in m.group().lower().split()]
        words = [w for w in words if w and w not in slot_words.GENERIC and w != "i"]
        out.update(words)
    out.update(slot_words.MODEL.findall(low, after))
    out.update(k for k in slot_words.KATAKANA.findall(low, after))
    out.update(k for k in slot_words.KANJI.findall(low, after) if k not in slot_words.GENERIC_JA)
    return frozenset(out)


#: A reaction the body has: a drug named with it is an allergy, not a dose the user takes.
_ALLERGIC = re.compile(r"allerg\w*|anaphyla\w*|アレルギー")
_TAKEN = re.compile(r"\b(?:take|takes|taking|took|prescribed|started|stopped|on)\b|飲んで|服用")
#: A date a person has ("my birthday is May 3"), not an appointment to keep.
_PERSONAL_DATE = re.compile(
    r"(?:birthday|anniversary)(?!\s+(?:party|parties|dinner|drinks|lunch|celebration|trip|bash|"
    r"present|gift|card|cake|plans?))|誕生日(?!会|パーティー|プレゼント)|記念日"
)
#: A standing rule about events ("never schedule meetings before 10am"), not one event.
_STANDING_RULE = re.compile(
    r"^(?:please\s+)?(?:never|no|don't|do not|avoid|always|only)\b"
    r"|\b(?:never|no)\s+(?:\w+\s+){0,2}(?:before|after|on|during)\b"
)
#: A person named and nothing more: "my wife's name is Yumi", "彼女の名前は".
_NAME_OF = re.compile(
    r"'s (?:first |middle |last |full )?name is\b|\bis (?:called|named)\b|の名前は"
)


def _slots(r: Reading) -> tuple[Slot, ...]:
    """Every slot the text fills; a text may fill several (a move can name a new job)."""
    found: list[Slot] = []
    low, text = r.low, r.text
    excluded = bool(slot_words.RESIDENCE_EXCLUDE.search(low))
    move = slot_words.RESIDENCE_MOVE.search(low)
    job_move = re.search(
        r"moved (?:\w+ ){0,2}to (?:a|an|the) (?:[\w-]+ ){0,3}(?:role|job|"
        r"position|team|department)",
        low,
    )
    state = slot_words.RESIDENCE_STATE.search(low)
    if not excluded and not job_move and (move or state):
        at = (move or state).start()  # type: ignore[union-attr]
        value = _place(text, low, at)
        if move and not r.future:
            found.append(Slot("residence", value=value, label=_label(value), changed=True))
        elif value:
            found.append(Slot("residence", value=value, label=_label(value)))
    job = slot_words.JOB_STATE.search(low)
    job_change = slot_words.JOB_CHANGE.search(low)
    if (
        job
        or job_move
        or (job_change and ("#job" in r.tokens or slot_words.JOB_CHANGE_STRONG.search(low)))
    ):
        at = (job or job_move or job_change).start()  # type: ignore[union-attr]
        titles = frozenset(m.group() for m in re.finditer(slot_words.JOB_TITLE, low))
        value = titles | _values(text, low, at)
        found.append(
            Slot("job", value=value, label=_label(value), changed=bool(job_change or job_move))
        )
    hours = slot_words.WORK_HOURS.search(low)
    if hours:
        found.append(Slot("work hours", value=frozenset([hours.group()]), label=hours.group()))
    events = list(slot_words.EVENT.finditer(low))
    times = frozenset(m.group() for m in slot_words.TIME_VALUE.finditer(low))
    dated = [e for e in events if _PERSONAL_DATE.match(low, e.start())]
    if dated:
        found.append(Slot("birthday", value=times, label=" ".join(sorted(times))))
        events = [e for e in events if e not in dated]
    if _STANDING_RULE.search(low):
        events = []  # a rule for every meeting, not a meeting
    if events and (times or r.change or r.future):
        events = [e for e in events if not slot_words.EVENT_ASPECT.match(low, e.end())]
        param = frozenset(
            stem(e.group()) for e in events if e.group() not in ("due", "date", "move", "call")
        )
        qual = frozenset(q for e in events for q in _qualifiers(low, e.start()))
        found.append(
            Slot(
                "schedule",
                param=param | frozenset(f"q:{q}" for q in qual),
                value=times,
                label=" ".join(sorted(times)),
            )
        )
    drugs = frozenset(_drugs(low))
    allergy = _ALLERGIC.search(low)
    if allergy:
        found.append(Slot("allergy", param=drugs))
    if drugs and not (allergy and not slot_words.DOSE.search(low) and not _TAKEN.search(low)):
        doses = frozenset(m.group() for m in slot_words.DOSE.finditer(low))
        found.append(Slot("dose", param=drugs, value=doses, label=" ".join(sorted(doses))))
    if (
        slot_words.POSSESSION_KIND_PROBE.search(low)
        and not slot_words.POSSESSION_ASPECT.search(low)
        and slot_words.POSSESSION_VERB.search(low)
    ):
        for kind, pattern in slot_words.POSSESSION_KIND:
            m = pattern.search(low)
            if m:
                value = _values(text, low) | frozenset(slot_words.MODEL.findall(low))
                found.append(
                    Slot("possession", param=frozenset([kind]), value=value, label=_label(value))
                )
                break
    for kind, pattern in slot_words.PET_KIND if slot_words.PET_KIND_PROBE.search(low) else ():
        if pattern.search(low) and slot_words.PET_OWN.search(low):
            value = _values(text, low) | frozenset(
                m.group() for m in slot_words.COUNT.finditer(low)
            )
            found.append(Slot("pet", param=frozenset([kind]), value=value, label=_label(value)))
            break
    if _NAME_OF.search(low) and r.subject.startswith("other:"):
        found.append(Slot("family"))
    elif slot_words.RELATIONSHIP.search(low) and not slot_words.BUSINESS_PARTNER.search(low):
        status = next((name for name, p in slot_words.REL_STATUS if p.search(low)), "")
        found.append(
            Slot("relationship", value=frozenset([status]) if status else frozenset(), label=status)
        )
    if slot_words.COMMUTE.search(low):
        modes = frozenset(stem(m.group()) for m in slot_words.COMMUTE_MODE.finditer(low))
        found.append(Slot("commute", value=modes, label=" ".join(sorted(modes))))
    if slot_words.HEALTH.search(low):
        found.append(Slot("health"))
    if slot_words.PREFERENCE_SLOT.search(low):
        found.append(Slot("preference"))
    if slot_words.PLAN_SLOT.search(low) or r.future:
        found.append(Slot("plan"))
    freq = slot_words.HABIT_FREQUENCY.search(low)
    if freq:
        activity = frozenset(
            t for t in r.tokens if t not in slot_words.TIME_WORDS and not t[:1].isdigit()
        )
        found.append(
            Slot("habit", param=activity, value=frozenset([freq.group()]), label=freq.group())
        )
    return tuple(found)


def _qualifiers(low: str, at: int) -> set[str]:
    """The words naming which event: "dentist appointment", "英会話のレッスン"."""
    before = low[max(0, at - 40) : at]
    jm = re.search(r"([\u4e00-\u9fff\u30a0-\u30ffー]{2,})の?$", before)
    if jm:
        return {jm.group(1)} - slot_words.GENERIC_JA
    words = slot_words.EN_TOKEN.findall(before)[-2:]
    out = set()
    for w in reversed(words):
        if (
            w in slot_words.GENERIC
            or w.endswith("'s")
            or w in slot_words.TIME_WORDS
            or w[:1].isdigit()
        ):
            break
        out.add(stem(w))
    return out


def _drugs(low: str) -> set[str]:
    """Drug names in the text; Japanese "血圧の薬" keeps what the drug is for."""
    out: set[str] = set()
    for pattern in slot_words.DRUG:
        for m in pattern.finditer(low):
            word = m.group()
            if word in ("薬", "錠"):
                before = re.search(r"([\u4e00-\u9fff\u30a0-\u30ffー]+)の$", low[: m.start()])
                word = (before.group(1) + "の薬") if before else "薬"
            if word not in (
                "pills",
                "pill",
                "tablets",
                "tablet",
                "medication",
                "meds",
                "dose",
                "dosage",
                "line",
                "prescription",
                "prescriptions",
                "prescribed",
            ):
                out.add(stem(word))
    return out


def _place(text: str, low: str, at: int) -> frozenset[str]:
    """The place a residence clause names: capitalised words, or the Japanese run before に."""
    if CJK_RUN.search(low):
        out = set(
            re.findall(
                r"([\u4e00-\u9fff\u30a0-\u30ffー]{2,})(?:に|へ|で|の)"
                r"(?=住|引っ越|引越|"
                r"移|暮らし|在住|越)",
                low,
            )
        )
        out.update(re.findall(r"住まいは([\u4e00-\u9fff\u30a0-\u30ffー]{2,})", low))
        out.update(re.findall(r"([\u4e00-\u9fff\u30a0-\u30ffー]{2,}?)在住", low))
        return frozenset(o for o in out if o not in slot_words.GENERIC_JA)
    start = max(0, at - 30)
    return frozenset(
        v
        for v in _values(text, low, start)
        if not v[:1].isdigit() or re.fullmatch(r"\d+(?:st|nd|rd|th)", v)
    )


def _label(values: frozenset[str], limit: int = 3) -> str:
    return " ".join(sorted(values)[:limit])
