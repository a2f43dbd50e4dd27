"""One rule for strengths: a program's verification and its wording, the combiner and containment,
each checked against a small statement of the rule written here, independently of the code; and
the rule as docs/predict.md states it."""

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tasks
from crasp.checker import check
from crasp.parser import parse
from tasks import engine
from tasks import predict as predict_module
from tasks.coverage import Exercise, probes
from tasks.evidence import Evidence
from tasks.evidence import programs
from tasks.evidence.source import Source, cheap, search
from tasks.findings import QUICK, Finding, Kind, Reason, Strength, Verdict, open_question
from tasks.predict import combine
from tasks.verify import Report

DOCS = Path(__file__).resolve().parent.parent / "docs" / "predict.md"
G, F = Verdict.GENERALIZES, Verdict.FAILS
E, V, P = Strength.EXTRAPOLATED, Strength.VERIFIED, Strength.PROOF
REASONS = {G: Reason.PROGRAM_VERIFIED, F: Reason.MODULAR_COUNTING}
SHORT_OF = ("not exercised", "not reached", "beyond twice")
"""The words that say a verification fell short of the rule."""


# ---------------------------------------------------------------- the rule, stated here


def rule_strength(reach: int, largest: int, longest: int, sides: list[tuple[bool, bool, bool]]) -> Strength:
    """A program that passed verification is verified only when the inputs went past twice its
    largest constant (or to the longest input) and took every comparison true, false and to its
    threshold."""
    reached = reach >= 2 * largest or reach >= longest
    return V if reached and all(all(s) for s in sides) else E


RANK = {E: 1, V: 2, P: 3}


def rule_verdict(findings) -> tuple[Verdict, Strength | None, str | None, int]:
    """The combiner's rules: (verdict, strength, the deciding source or "conflict"/None, the number of
    weaker findings shown as conflicts)."""
    claims = [f for f in findings if f.reason.kind is Kind.CLAIM]
    if not claims:
        return Verdict.UNDETERMINED, None, None, 0
    settling = [f for f in claims if RANK[f.strength] >= 2]
    considered = settling or claims  # nothing verified or proof: every claim is of the top strength
    if len({f.claim for f in considered}) > 1:
        return Verdict.UNDETERMINED, None, "conflict", 0
    top = max(RANK[f.strength] for f in claims)
    winner = next(f for f in claims if RANK[f.strength] == top)
    return winner.claim, winner.strength, winner.source, sum(f.claim is not winner.claim for f in claims)


def claim(source: str, verdict: Verdict, strength: Strength) -> Finding:
    return Finding(source, verdict, strength, f"{source} says {verdict.value}", REASONS[verdict])


def silent(source: str) -> Finding:
    return open_question(source, "missing: a verified program", Reason.NO_PROGRAM)


OPTIONS = [None, *itertools.product((G, F), (E, V, P))]


def made(source: str, option) -> list[Finding]:
    return [] if option is None else [claim(source, *option)]


# ---------------------------------------------------------------- a program's verification

PROGRAM = check(parse('alphabet {"<bos>", "<eos>"}\nA = #"a" >= 7 && #"b" < #"a" + 2\nnext "<eos>" = A'))
PROBES = probes(PROGRAM)


def report(reach: int, largest: int, longest: int, sides) -> Report:
    exercised = tuple(Exercise(PROBES[i % len(PROBES)], *side) for i, side in enumerate(sides))
    return Report("t", "p", exhaustive_length=4, exhaustive_symbols=("a", "b"), exhaustive_inputs=30,
                  sampled_inputs=10, max_sampled_length=reach, offsets=(0,), checks=100, counterexample=None,
                  derived_inputs=5, reach=reach, largest_constant=largest, exercised=exercised,
                  longest_possible=longest)


def assert_worded_by_the_rule(finding: Finding) -> None:
    """The headline and the one-line reason never say "verified" beside a shortfall, and always
    name the shortfall of an extrapolated program."""
    short = any(words in finding.summary for words in SHORT_OF)
    assert short == (finding.strength is E), finding.headline()
    assert ("verified" in finding.brief) == (finding.strength is V), finding.brief
    if finding.strength is V:
        assert not any(words in finding.headline() or words in finding.brief for words in SHORT_OF)


@settings(max_examples=300, deadline=None)
@given(reach=st.integers(0, 400), largest=st.integers(0, 250), longest=st.sampled_from([10, 150, 10 ** 9]),
       sides=st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), max_size=4))
def test_a_programs_strength_and_wording_follow_the_rule(reach, largest, longest, sides):
    checked = report(reach, largest, longest, sides)
    expected = rule_strength(reach, largest, longest, sides)
    assert programs.strength(checked) is expected
    assert (programs.coverage(checked) is programs.Coverage.COMPLETE) == (expected is V)
    candidate = programs.Checked("library program", PROGRAM.program, PROGRAM, checked,
                                 kind=programs.Origin.LIBRARY)
    found = programs.finding([candidate], "ape")
    assert found.strength is expected and found.claim is G
    assert_worded_by_the_rule(found)


def test_the_best_program_is_the_strongest_then_the_shallowest():
    shallow_short = programs.Checked("shallow", PROGRAM.program, PROGRAM, report(400, 10, 10 ** 9, [(True, True, False)]),
                                     kind=programs.Origin.LIBRARY)
    deep = check(parse('alphabet {"<bos>", "<eos>"}\nB = #"a" > 0\nA = #(B) >= 7\nnext "<eos>" = A'))
    deep_full = programs.Checked("deep", deep.program, deep, report(400, 10, 10 ** 9, [(True, True, True)]),
                                 kind=programs.Origin.LIBRARY)
    assert deep.info.depth > PROGRAM.info.depth
    found = programs.finding([shallow_short, deep_full], "ape")
    assert found.strength is V and found.details[0].startswith("deep")


# ---------------------------------------------------------------- the combiner


@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_combine_follows_the_rule_for_every_combination(count):
    for options in itertools.product(OPTIONS, repeat=count):
        findings = [claim(f"s{i}", *o) if o else silent(f"s{i}") for i, o in enumerate(options)]
        verdict, strength, basis, conflicts = rule_verdict(findings)
        got = combine(findings)
        assert (got.verdict, got.strength) == (verdict, strength), (options, got.headline)
        assert got.basis == (basis or "none"), options
        if verdict is not Verdict.UNDETERMINED:
            assert len(got.conflicts) == conflicts and got.headline.startswith(f"{verdict.value.upper()} ({strength.value}: ")
            assert ("[conflicting, weaker:" in got.headline) == bool(conflicts)


# ---------------------------------------------------------------- containment


def test_containment_takes_the_strongest_finding_for_every_combination():
    """Each scheme holds up to two findings, from the sources both schemes share (so a carried
    finding can meet the receiving scheme's own of the same source): its verdict is the rule's on
    its own findings and every finding of the other scheme that containment carries."""
    for ape_program, ape_other, nope_program, nope_other in itertools.product(OPTIONS, repeat=4):
        own = {"ape": [*made("program", ape_program), *made("other", ape_other)],
               "nope": [*made("program", nope_program), *made("other", nope_other)]}
        gathered = engine.contained(own)
        for scheme, other, carried in (("ape", "nope", G), ("nope", "ape", F)):
            effective = own[scheme] + [f for f in own[other] if f.claim is carried]
            verdict, strength, basis, _ = rule_verdict(effective)
            got = combine(gathered[scheme])
            case = (scheme, ape_program, ape_other, nope_program, nope_other)
            assert (got.verdict, got.strength) == (verdict, strength), (case, got.headline)
            assert got.basis == (basis or "none"), case
            if verdict is Verdict.UNDETERMINED:
                continue
            mine = max((RANK[f.strength] for f in own[scheme] if f.claim is verdict), default=0)
            says = f", carried over from {'NoPE' if other == 'nope' else 'APE'}:" in got.brief
            assert says == (mine < RANK[strength]), (case, got.brief)


class Sources:
    """Fake sources for the engine: a cheap one and a search, each answering from a table, and a
    record of who asked them."""

    def __init__(self, cheap_findings: dict[str, Finding], search_findings: dict[str, Finding]):
        self.asked: list[tuple[str, str]] = []
        self.sources = (self._source("early", cheap, cheap_findings), self._source("late", search, search_findings))

    def _source(self, name, cost, table):
        def assess(evidence, scheme):
            self.asked.append((name, scheme))
            return table[scheme]
        return Source(name, frozenset(table), frozenset({G, F}), cost, assess)


def gathered(monkeypatch, cheap_findings, search_findings):
    sources = Sources(cheap_findings, search_findings)
    monkeypatch.setattr(engine, "SOURCES", sources.sources)
    found = engine.gather(Evidence(tasks.get("parity"), QUICK), ["ape", "nope"])
    return found, sources.asked


def test_a_weaker_scheme_is_settled_by_the_stronger_finding_carried_over(monkeypatch):
    """APE's own program is extrapolated, NoPE's (the same source) verified: APE takes NoPE's,
    says so, and its searches do not run."""
    found, asked = gathered(monkeypatch, {"ape": claim("early", G, E), "nope": claim("early", G, V)},
                            {"ape": silent("late"), "nope": silent("late")})
    ape = combine(found.findings["ape"], found.skipped["ape"])
    assert (ape.verdict, ape.strength, ape.basis) == (G, V, "early")
    assert "early, carried over from NoPE:" in ape.brief and ape.skipped == ("late",)
    assert ("late", "ape") not in asked and ("late", "nope") not in asked


def test_a_scheme_settled_early_still_takes_a_stronger_finding_found_later(monkeypatch):
    found, asked = gathered(monkeypatch, {"ape": claim("early", G, V), "nope": silent("early")},
                            {"nope": claim("late", G, P)})
    assert ("late", "nope") in asked
    ape = combine(found.findings["ape"])
    assert (ape.verdict, ape.strength, ape.basis) == (G, P, "late") and "carried over from NoPE" in ape.brief


def test_containment_never_hides_a_conflict(monkeypatch):
    """A verified APE failure and a verified NoPE success: each reaches the other scheme, and
    neither may win."""
    found, _ = gathered(monkeypatch, {"ape": claim("early", F, V), "nope": claim("early", G, V)},
                        {"ape": silent("late"), "nope": silent("late")})
    for scheme in ("ape", "nope"):
        verdict = combine(found.findings[scheme])
        assert (verdict.verdict, verdict.basis) == (Verdict.UNDETERMINED, "conflict"), verdict.headline


# ---------------------------------------------------------------- the library and the suite


def test_every_library_programs_finding_is_worded_by_the_rule():
    """Every task's library programs, verified at the quick budget as predict verifies them: the
    finding per scheme has the rule's strength, and its headline and one-line reason agree."""
    seen = 0
    for task in tasks.all_tasks():
        if task.program("ape") is None and task.program("nope") is None:
            continue
        found = Evidence(task, QUICK).get(programs.candidates)
        for candidate in found:
            if candidate.ok:
                seen += 1
                assert rule_strength(candidate.report.reach, candidate.report.largest_constant,
                                     candidate.report.longest_possible,
                                     [(e.true, e.false, e.boundary) for e in candidate.report.exercised]) \
                    is programs.strength(candidate.report)
        for scheme in ("ape", "nope"):
            finding = programs.finding(list(found), scheme)
            if finding.decisive:
                assert_worded_by_the_rule(finding)
    assert seen >= 10


# ---------------------------------------------------------------- the docs


def _plain(text: str) -> str:
    return " ".join(text.replace("**", "").replace("`", "").split())


def _rules(text: str) -> list[str]:
    """The numbered rules of the combiner in a docstring or a Markdown file."""
    block = re.search(r"^1\. only findings.*?(?=\n\n)", text, re.M | re.S)
    assert block, "no numbered rule list"
    return [_plain(rule) for rule in re.split(r"\n(?=\d\. )", block.group(0))]


def test_the_docs_state_the_rules_the_code_follows():
    docs = DOCS.read_text(encoding="utf-8")
    assert _rules(docs) == _rules(predict_module.__doc__) and len(_rules(docs)) == 5
    assert _plain(programs.RULE) in _plain(docs)
    assert "tasks.evidence.programs.strength" in _plain(docs)
