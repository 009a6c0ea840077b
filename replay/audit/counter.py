"""An independent disfluency counter for any text (ours, an LLM's, a transcript).

It needs no insertion metadata: it reads the text the way a listener would hear it.
The definitions, in order (the method paper, section 5.1 and Appendix C):

**Tokens.** An em dash (``—``, also ``―`` and ASCII runs ``--``) is a word separator,
so an unspaced dash cannot fuse a filler to its neighbour ("to—um—wait"). The text is
then split on whitespace. A *spoken token* is one holding at least one letter or
digit; tokens of punctuation only (a lone ``—``, ``...``, ``&``) are silent, and so
are bracketed stage directions ("[pause]", "[cough]", "[clears throat]") and any
token opening a bracket.

**Words** = the number of spoken tokens, fillers and stutter stems included (they are
words the listener hears). Rates are per 1,000 such words.

**Key** of a token = lower-cased, with every leading and trailing non-alphanumeric
character removed ("But," → "but", "you—" → "you"). A token is **cut** when it ends in
a hyphen ("I-", "th-"): a word broken off.

**Fillers** = spoken tokens that are not cut and whose key is a filled pause:
um, umm, uhm, uh, uhh, er, erm (any number of repeated letters: ``u+m+``, ``u+h+m*``,
``e+r+m*``). "uh-huh", "mm-hmm", "like", "you know" are not fillers. "uh, uh" is two
fillers and no repetition.

**Repetitions** count three forms over the sequence of non-filler spoken tokens (the
fillers between two tokens are skipped, so a filler can sit inside a repetition):

* *adjacent* — a token whose key equals the key of the next token ("the- the",
  "I I"), or a cut token whose key is a prefix of the next one's ("th- the",
  "I- I'm"); a run of n such tokens is n - 1 repetitions ("I- I- I" = 2);
* *filler-separated* — the same, with one or more fillers between ("I, uh, I");
* *two-word phrase* — after collapsing each adjacent run to its last token, two
  different keys followed by the same two keys ("are you— are you"), counted left
  to right without overlap ("a b a b a b" = 2).

A cut word holding dashes, repeated whole by the next whitespace token
("to—wait- to—wait"), is one adjacent repetition, and its parts leave the sequence
(as a one-word stem's do by joining its word).

A cut filler ("um-", "uh-") is a stutter on a filled pause: one adjacent repetition
each, whether or not the filler follows ("um- um," is one filler and one repetition;
the counter cannot know which of the two was added, so it must not depend on it).

**Naturally repeated words** in a text ("I know that that is true") are counted
as repetitions like any other: the counter cannot tell grammar from a stutter, and
counting them consistently is what makes the difference below exact.

**Agreement with injection.** For a text injected by
:func:`controls.inject_disfluency`, ``count(rendered) - count(original)`` equals the
insertion metadata: +1 filler per filler insertion, +1 repetition per repetition
insertion, nothing per pause. This holds because a filler or a pause leaves the
non-filler sequence unchanged, and a repetition stem has its word's key, so it joins
that word's run (one more adjacent/filler-separated repetition) without changing the
collapsed sequence the phrase form reads. Per-form counts can move (an injected
filler between "that that" turns an adjacent repetition into a filler-separated one);
the totals do not. The exceptions are insertions nobody hears: a repetition of a
word without letters or digits (a lone dash) or of a stage direction ("[pause]")
counts nothing (:func:`spoken_insertion_counts` sets those apart), and an insertion
*inside* a multi-word direction ("[clears um, throat]") is silent too.

**Sentence ends.** A repetition never pairs words across a sentence end: a token
ending in ``.``, ``!`` or ``?`` (closing quotes and brackets after it allowed) ends
its sentence, and the next token starts a new run ("Yes! Yes, I'm sure" and "No. No
way" hold no repetition; "Yes, yes" does). An ellipsis (``...``, ``…``) is a trailing
off, not a sentence end ("I... I think" is one repetition). A phrase repetition needs
its four tokens in one sentence. An abbreviation ("Mr.") reads as a sentence end
too: the counter cannot tell, and erring this way never invents a repetition.
Injection keeps this: its fillers (``um,``), pauses and stems (``But-``) never end a
sentence, and a stem sits before its word.

**Control tokens** (τ2's ``###STOP###``, ``###TRANSFER###``, ``###OUT-OF-SCOPE###``)
are instructions to the simulator, not speech: silent, like stage directions, and so
is any token opening with ``###`` (a stem of one, "###STOP-", is a silent repetition).

**Turn-initial filler**: the first spoken token of the turn that is not a cut
filler is a filler ("um, yes", "um- um, yes").

**um / uh.** Each filler is an *um* (``u+h*m+``: um, umm, uhm) or an *uh* (``u+h+``);
er and erm are neither.

**Self-repairs and restarts.** An *interruption point* is a whitespace token that ends
in a dash (``—``, ``―`` or ``--``) right after its letters ("the—"): the speaker broke
off there. (A standalone "—" is a pause, not an interruption point.) Reading the
non-filler sequence with repetition runs collapsed, let ``x`` be the word after the
interruption point; the speaker *retraced* if ``x`` also opens the stretch before it:
the nearest earlier word with ``x``'s key, at least two words back, in the same
sentence and after any earlier interruption point. That stretch (the reparandum) is
a **restart** when the words after the interruption say it again word for word and it
is three words or more ("I need the— I need the blue one"), and a **repair** when they
differ ("I want the— I need the blue one"). Without a retrace it is neither (a
trailing-off "so—"). A word-for-word retrace of two words stays the two-word phrase
repetition ("are you— are you") and a one-word one ("the— the") an adjacent
repetition, as before; a repair's or restart's reparandum is left out of the phrase
form. :func:`controls.disfluency_human.inject_human` writes exactly this
shape, and ``count(rendered) - count(original)`` then also gains one repair or restart
per self-correction in the insertion list; the paper's rule never writes a dash onto
a word, so it leaves these counts alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# τ2's control tokens ("###STOP###"): orchestration, never heard.
from replay.tau2.control import TOKEN as CONTROL_TOKEN

# Em dash, horizontal bar, and the ASCII stand-in "--" (LLMs write "---" for a dash).
_SEPARATORS = re.compile(r"[\u2014\u2015]|-{2,}")
# "[pause]", "[cough]", "[clears throat]": directions to a speech engine, not words.
_DIRECTIONS = re.compile(r"\[[^\[\]]{0,40}\]")
_FILLER = re.compile(r"u+m+|u+h+m*|e+r+m*")
# A sentence ends at . ! ? (closing quotes/brackets may follow); "..." and "…" do not.
_SENTENCE_END = re.compile(r"(?<![.\u2026])[.!?][\"'\u201d\u2019)\]]*$")
_CUT_MARKS = ("-", "\u2010", "\u2011")
_INTERRUPTION = re.compile(r"(?:[\u2014\u2015]|-{2,})$")
_UM = re.compile(r"u+h*m+")
_MAX_RETRACE = 8


@dataclass(frozen=True, slots=True)
class TurnCounts:
    """What the counter found in one turn."""

    words: int = 0
    fillers: int = 0
    adjacent: int = 0
    filler_separated: int = 0
    phrase: int = 0
    initial_filler: bool = False
    repairs: int = 0
    restarts: int = 0
    um: int = 0
    uh: int = 0

    @property
    def repetitions(self) -> int:
        """All three repetition forms together."""
        return self.adjacent + self.filler_separated + self.phrase

    @property
    def combined(self) -> int:
        """Fillers plus repetitions (the paper's "Comb.")."""
        return self.fillers + self.repetitions

    @property
    def self_corrections(self) -> int:
        """Repairs plus restarts."""
        return self.repairs + self.restarts

    @property
    def disfluencies(self) -> int:
        """Everything the counter hears as a disfluency: fillers, repetitions, repairs
        and restarts."""
        return self.combined + self.self_corrections

    @property
    def any(self) -> bool:
        return self.combined > 0

    def __sub__(self, other: TurnCounts) -> TurnCounts:
        return TurnCounts(
            self.words - other.words,
            self.fillers - other.fillers,
            self.adjacent - other.adjacent,
            self.filler_separated - other.filler_separated,
            self.phrase - other.phrase,
            self.initial_filler and not other.initial_filler,
            self.repairs - other.repairs,
            self.restarts - other.restarts,
            self.um - other.um,
            self.uh - other.uh,
        )

    def as_dict(self) -> dict[str, int | bool]:
        return {
            "words": self.words,
            "fillers": self.fillers,
            "repetitions": self.repetitions,
            "adjacent": self.adjacent,
            "filler_separated": self.filler_separated,
            "phrase": self.phrase,
            "initial_filler": self.initial_filler,
            "repairs": self.repairs,
            "restarts": self.restarts,
            "um": self.um,
            "uh": self.uh,
        }


def _heard(token: str) -> bool:
    return not token.startswith(("[", "###")) and any(c.isalnum() for c in token)


def _groups(text: str) -> list[tuple[str, list[str]]]:
    """Each whitespace token with the spoken tokens it splits into at its dashes."""
    out: list[tuple[str, list[str]]] = []
    for raw in _DIRECTIONS.sub(" ", CONTROL_TOKEN.sub(" ", text)).split():
        out.append((raw, [p for p in _SEPARATORS.sub(" ", raw).split() if _heard(p)]))
    return out


def spoken_tokens(text: str) -> list[str]:
    """The tokens a listener hears: em dashes split words; stage directions and
    punctuation-only tokens are dropped."""
    return [part for _, parts in _groups(text) for part in parts]


def word_count(text: str) -> int:
    """Words as the counter defines them (spoken tokens)."""
    return len(spoken_tokens(text))


def token_key(token: str) -> str:
    """Lower-cased token without leading/trailing non-alphanumerics ("But," -> "but")."""
    start, end = 0, len(token)
    while start < end and not token[start].isalnum():
        start += 1
    while end > start and not token[end - 1].isalnum():
        end -= 1
    return token[start:end].lower()


def is_cut(token: str) -> bool:
    """A word broken off: it ends in a hyphen ("I-", "th-")."""
    return token.endswith(_CUT_MARKS)


def is_filler_word(token: str) -> bool:
    """A filled pause (um/uh and spellings), not cut."""
    return not is_cut(token) and _FILLER.fullmatch(token_key(token)) is not None


def _joins(prev_key: str, prev_cut: bool, key: str) -> bool:
    """Does a token with ``key`` repeat the previous non-filler token?"""
    return key == prev_key or (prev_cut and key.startswith(prev_key))


def count(text: str) -> TurnCounts:
    """Count words, fillers and the three repetition forms in ``text``."""
    groups = _groups(text)
    tokens: list[str] = []
    starts: list[bool] = []  # first spoken part of its whitespace token
    broken: list[bool] = []  # last spoken part of a token ending in a dash ("the—")
    # A cut dashed word repeated whole ("to—wait- to—wait"): one repetition, and its
    # parts stay out of the sequence, as a one-word stem's would after joining.
    whole_stem: list[bool] = []
    for g, (raw, parts) in enumerate(groups):
        repeated = (
            len(parts) > 1
            and is_cut(raw)
            and g + 1 < len(groups)
            and [token_key(p) for p in parts] == [token_key(p) for p in groups[g + 1][1]]
        )
        tokens.extend(parts)
        starts.extend(k == 0 for k in range(len(parts)))
        cut_off = _INTERRUPTION.search(raw) is not None
        broken.extend(cut_off and k == len(parts) - 1 for k in range(len(parts)))
        whole_stem.extend([repeated] * len(parts))
    n = len(tokens)
    if n == 0:
        return TurnCounts()
    keys = [token_key(t) for t in tokens]
    cuts = [is_cut(t) for t in tokens]
    filled = [_FILLER.fullmatch(k) is not None for k in keys]
    fillers = [filled[i] and not cuts[i] and not whole_stem[i] for i in range(n)]
    # A cut filler ("um-") is a stutter on a filled pause: a repetition, never a word
    # of the sequence. Whether a filler follows cannot matter: "um- um," reads the
    # same whether the stem or the filler was added.
    stutters = [filled[i] and cuts[i] and not whole_stem[i] for i in range(n)]
    ends = [_SENTENCE_END.search(t) is not None for t in tokens]
    adjacent = separated = 0
    collapsed: list[str] = []  # one key per run of repeats: what the phrase form reads
    in_sentence: list[int] = []  # the sentence each run is in (runs never cross one)
    run_broken: list[bool] = []  # does the run end at an interruption point?
    sentence = 0
    prev_key, prev_cut, gap = "", False, False
    for i in range(n):
        if whole_stem[i]:
            adjacent += starts[i]
            continue
        if fillers[i] or stutters[i]:
            adjacent += stutters[i]
            gap = True
            sentence += ends[i]
            continue
        key = keys[i]
        same_sentence = bool(in_sentence) and in_sentence[-1] == sentence
        if collapsed and same_sentence and _joins(prev_key, prev_cut, key):
            if gap:
                separated += 1
            else:
                adjacent += 1
            collapsed[-1] = key
            run_broken[-1] = broken[i]
        else:
            collapsed.append(key)
            in_sentence.append(sentence)
            run_broken.append(broken[i])
        prev_key, prev_cut, gap = key, cuts[i], False
        sentence += ends[i]
    repairs, restarts, reparandum = _self_corrections(collapsed, in_sentence, run_broken)
    keep = [k for k in range(len(collapsed)) if k not in reparandum]
    seq = [collapsed[k] for k in keep]
    seq_sentence = [in_sentence[k] for k in keep]
    phrase = 0
    j = 0
    while j + 3 < len(seq):
        a, b, c, d = seq[j : j + 4]
        if a == c and b == d and a != b and seq_sentence[j] == seq_sentence[j + 3]:
            phrase += 1
            j += 2
        else:
            j += 1
    first = next((i for i in range(n) if not (stutters[i] or whole_stem[i])), n)
    initial = first < n and fillers[first]
    ums = sum(1 for i in range(n) if fillers[i] and _UM.fullmatch(keys[i]) is not None)
    uhs = sum(1 for i in range(n) if fillers[i] and keys[i].startswith("u")) - ums
    return TurnCounts(
        words=n,
        fillers=sum(fillers),
        adjacent=adjacent,
        filler_separated=separated,
        phrase=phrase,
        initial_filler=initial,
        repairs=repairs,
        restarts=restarts,
        um=ums,
        uh=uhs,
    )


def _self_corrections(
    collapsed: list[str], in_sentence: list[int], run_broken: list[bool]
) -> tuple[int, int, set[int]]:
    """Repairs, restarts and the reparandum positions in the collapsed sequence (see
    the module docstring, "Self-repairs and restarts")."""
    repairs = restarts = 0
    reparandum: set[int] = set()
    floor = 0  # a retrace never reaches back past an earlier interruption point
    for j in range(len(collapsed) - 1):
        if not run_broken[j] or in_sentence[j + 1] != in_sentence[j]:
            continue
        first = collapsed[j + 1]
        start = None
        for size in range(2, _MAX_RETRACE + 1):
            s = j - size + 1
            if s < floor or in_sentence[s] != in_sentence[j]:
                break
            if collapsed[s] == first:
                start = s
                break
        floor = j + 1
        if start is None:
            continue
        said = collapsed[start : j + 1]
        again = collapsed[j + 1 : j + 1 + len(said)]
        if said == again and len(said) == 2:
            continue  # "are you— are you": the two-word phrase repetition form
        if said == again:
            restarts += 1
        else:
            repairs += 1
        reparandum.update(range(start, j + 1))
    return repairs, restarts, reparandum


@dataclass(frozen=True, slots=True)
class InsertionCounts:
    """Insertion metadata summed: what the counter's difference should equal."""

    fillers: int = 0
    repetitions: int = 0
    pauses: int = 0
    silent_repetitions: int = 0
    """Repetitions of a word with no letter or digit: injected, but nothing is heard."""
    initial_fillers: int = 0
    repairs: int = 0
    restarts: int = 0


class InsertionLike(Protocol):
    """An insertion record: controls' ``Insertion`` or the log's ``InsertionRecord``."""

    @property
    def index(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def token(self) -> str: ...


def spoken_insertion_counts(
    insertions: Iterable[InsertionLike | Mapping[str, Any]],
) -> InsertionCounts:
    """Sum insertion records (objects or ``index``/``kind``/``token`` dicts) the way
    the counter can hear them."""
    fillers = reps = pauses = silent = initial = repairs = restarts = 0
    for ins in insertions:
        if isinstance(ins, Mapping):
            kind, token, index = str(ins["kind"]), str(ins["token"]), int(ins["index"])
        else:
            kind, token, index = str(ins.kind), ins.token, ins.index
        if kind == "filler":
            fillers += 1
            initial += index == 0
        elif kind == "repetition":
            if spoken_tokens(token):
                reps += 1
            else:
                silent += 1
        elif kind == "pause":
            pauses += 1
        elif kind in ("repair", "restart") and _INTERRUPTION.search(token):
            # One self-correction is a run of words; its last one carries the dash.
            repairs += kind == "repair"
            restarts += kind == "restart"
    return InsertionCounts(fillers, reps, pauses, silent, initial, repairs, restarts)


__all__ = [
    "InsertionCounts",
    "InsertionLike",
    "TurnCounts",
    "count",
    "is_cut",
    "is_filler_word",
    "spoken_insertion_counts",
    "spoken_tokens",
    "token_key",
    "word_count",
]
