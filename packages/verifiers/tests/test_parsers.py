"""Parsers and answer-extraction helpers."""

from __future__ import annotations

import pytest

import verifiers as vf
from verifiers.parsers import MaybeThinkParser, Parser, ThinkParser, XMLParser
from verifiers.utils.answers import extract_boxed_answer, extract_hash_answer


def msgs(*contents: object, role: str = "assistant") -> list[dict]:
    out: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}]
    for c in contents:
        out.append({"role": role, "content": c})
    return out


# ---------------------------------------------------------------- answers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"so \boxed{42}.", "42"),
        (r"\boxed{\frac{1}{2}}", r"\frac{1}{2}"),
        (r"\boxed{\{1,2\}}", r"\{1,2\}"),
        (r"first \boxed{1} then \boxed{ 2 }", "2"),
        (r"\boxed{1} and \fbox{x^{2}}", "x^{2}"),
        (r"\fbox{3} and \boxed{4}", "4"),
        (r"\boxed{}", ""),
        (r"\boxed{a{b{c}}d} tail }", "a{b{c}}d"),
    ],
)
def test_extract_boxed(text: str, expected: str) -> None:
    assert extract_boxed_answer(text) == expected
    assert extract_boxed_answer(text, strict=True) == expected


@pytest.mark.parametrize("text", ["final value 42", r"\boxed{unclosed {x}", r"\boxed 5"])
def test_extract_boxed_missing(text: str) -> None:
    assert extract_boxed_answer(text) == text  # classic fallback: the whole text
    assert extract_boxed_answer(text, strict=True) == ""


def test_extract_boxed_empty_input() -> None:
    assert extract_boxed_answer("") == ""
    assert extract_boxed_answer(None, strict=True) == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Janet has 3.\n#### 72", "72"),
        ("#### 1,234", "1234"),
        ("#### -1,000,000.5", "-1000000.5"),
        ("#### 1,2", "1,2"),  # not a thousands-separated number: left alone
        ("work\n####   18  \nextra", "18"),
        ("no marker", None),
        ("", None),
    ],
)
def test_extract_hash(text: str, expected: str | None) -> None:
    assert extract_hash_answer(text) == expected


# ---------------------------------------------------------------- Parser


def test_parser_strings_and_messages() -> None:
    """upstream 0.3.1 legacy/parsers/parser.py: `parse_answer` of a string parses it; of
    messages, the last assistant message's content (list contents: the text parts joined with
    spaces, then stripped; other parts and non-text contents count as no text)."""
    p = Parser()
    assert p.parse("x") == "x"
    assert p.parse_answer("x") == "x"
    assert p.parse_answer(msgs("a", "b")) == "b"
    assert p.parse_answer(msgs()) is None
    assert p.parse_answer([]) is None
    listed = msgs(
        [
            {"type": "text", "text": " one"},
            {"type": "image_url"},
            "raw",
            {"type": "text", "text": "two "},
        ]
    )
    assert p.parse_answer(listed) == "one two"
    tool_call_only = [*msgs("a"), {"role": "assistant", "content": None, "tool_calls": []}]
    assert p.parse_answer(tool_call_only) == ""
    assert p.parse_answer(msgs(5)) == ""
    upper = Parser(extract_fn=str.upper)
    assert upper.parse_answer(msgs("abc")) == "ABC"


def test_parser_reads_message_objects() -> None:
    """upstream 0.3.1 legacy/parsers/parser.py: messages may be objects with `role` and
    `content` attributes (openai message objects), not only dicts."""

    class Msg:
        def __init__(self, role: str, content: object) -> None:
            self.role, self.content = role, content

    p = Parser()
    conv = [Msg("user", "q"), Msg("assistant", "first"), Msg("assistant", "last")]
    assert p.parse_answer(conv) == "last"
    assert [m.content for m in p.get_assistant_messages(conv)] == ["first", "last"]
    assert p._message_field(conv[0], "role") == "user"
    assert p._content_to_text([Msg("x", "y")]) == ""


def test_parser_role_helpers_and_format_reward() -> None:
    """upstream 0.3.1 legacy/parsers/parser.py: role filters and a format reward of 1.0."""
    p = Parser()
    conv = [*msgs("a"), {"role": "tool", "content": "t"}, {"role": "assistant", "content": "b"}]
    assert [m["content"] for m in p.get_assistant_messages(conv)] == ["a", "b"]
    assert [m["content"] for m in p.get_user_messages(conv)] == ["q"]
    assert [m["content"] for m in p.get_system_messages(conv)] == ["sys"]
    assert [m["content"] for m in p.get_tool_messages(conv)] == ["t"]
    f = p.get_format_reward_func()
    assert f.__name__ == "format_reward_func"
    assert f(completion=conv, answer="x") == 1.0
    assert f([]) == 1.0


def test_parser_loggers_are_named_as_upstream() -> None:
    """upstream 0.3.1 legacy/parsers/parser.py: `self.logger` is named after the base parser
    module and the instance's class (0.3.1 puts `legacy.` in the module path; ours lives at
    the classic path)."""

    class MyParser(Parser):
        pass

    assert Parser().logger.name == "verifiers.parsers.parser.Parser"
    assert XMLParser(["a"]).logger.name == "verifiers.parsers.parser.XMLParser"
    assert MyParser().logger.name == "verifiers.parsers.parser.MyParser"
    assert MaybeThinkParser().logger.name == "verifiers.parsers.parser.MaybeThinkParser"


def test_think_parsers_warn_as_upstream(caplog: pytest.LogCaptureFixture) -> None:
    """upstream 0.3.1 legacy/parsers/think_parser.py and xml_parser.py: a ThinkParser, or an
    XMLParser with a 'think' field, logs a warning about templates that strip think tags."""
    with caplog.at_level("WARNING", logger="verifiers"):
        ThinkParser()
        XMLParser(["answer"])
        XMLParser(["think", "answer"])
    names = [r.name for r in caplog.records]
    assert names == ["verifiers.parsers.parser.ThinkParser", "verifiers.parsers.parser.XMLParser"]
    assert all("Qwen3" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------- think parsers


@pytest.mark.parametrize(
    ("text", "think", "maybe"),
    [
        ("<think>hmm</think> 42 ", "42", "42"),
        ("<think>a</think>b</think> c", "c", "c"),
        ("reasoning stripped by template</think>\n7", "7", "7"),
        ("no tags at all", "", "no tags at all"),
        ("<think>unfinished reasoning", "", "<think>unfinished reasoning"),
        ("<think>x</think>", "", ""),
    ],
)
def test_think_parsers(text: str, think: str, maybe: str) -> None:
    """upstream 0.3.1 legacy/parsers/think_parser.py, maybe_think_parser.py: the text after the
    last </think>; ThinkParser gives "" without one, MaybeThinkParser the whole text."""
    assert ThinkParser().parse(text) == think
    assert MaybeThinkParser().parse(text) == maybe
    assert ThinkParser().parse_answer(msgs(text)) == think
    assert MaybeThinkParser().parse_answer(text) == maybe


def test_think_parsers_with_extract_fn() -> None:
    """upstream 0.3.1 legacy/parsers/think_parser.py: `extract_fn` applies to the answer part."""
    boxed = ThinkParser(extract_fn=extract_boxed_answer)
    assert boxed.parse_answer(msgs(r"<think>try \boxed{1}</think>so \boxed{2}")) == "2"
    assert boxed.parse_answer(msgs(r"<think>\boxed{1}")) == ""
    strict = MaybeThinkParser(lambda t: extract_boxed_answer(t, strict=True))
    assert strict.parse_answer(msgs(r"\boxed{5}")) == "5"
    assert strict.parse_answer(msgs("five")) == ""


def test_think_format_reward() -> None:
    """upstream 0.3.1 legacy/parsers/think_parser.py (values measured against it): the share of
    assistant messages that start with <think>, have one <think> and one </think> and
    anything, even whitespace, after it; a plain string holds no assistant message (0.0)."""
    f = ThinkParser().get_format_reward_func()
    assert f.__name__ == "format_reward_func"
    good = "<think>\nreason\n</think>\nanswer"
    assert f(msgs(good)) == 1.0
    assert f(good) == 0.0
    assert f(msgs(good, "answer only")) == 0.5
    assert f(msgs("<think>a</think>")) == 0.0  # nothing after
    assert f(msgs("<think>a</think>\n")) == 1.0  # whitespace counts, as upstream
    assert f(msgs("<think>a</think><think>b</think>c")) == 0.0
    assert f(msgs("pre <think>a</think>c")) == 0.0
    assert f(msgs("  <think>a</think>c")) == 1.0
    assert f(msgs()) == 0.0
    assert (
        f(msgs([{"type": "text", "text": "<think>a</think>"}, {"type": "text", "text": "b"}]))
        == 1.0
    )


# ---------------------------------------------------------------- XMLParser


def test_xml_parse_fields_and_alternatives() -> None:
    """upstream 0.3.1 legacy/parsers/xml_parser.py: one attribute per tag name, each holding only
    its own tag's content (the canonical name is not filled from an alternative)."""
    p = XMLParser(["think", ("answer", "final")])
    assert p.get_fields() == ["think", "answer"]
    r = p.parse("<think>\n  a\n</think>\n<final> 42 </final>")
    assert r.think == "a"
    assert r.answer is None and r.final == "42"
    r = p.parse("<answer>1</answer><final>2</final>")
    assert r.answer == "1" and r.final == "2"
    r = p.parse("nothing here")
    assert vars(r) == {"think": None, "answer": None, "final": None}
    assert p.parse("<answer>\nmulti\nline\n</answer>").answer == "multi\nline"
    assert p.parse("<answer>  x  </answer>", strip=False).answer == "x"


def test_xml_field_validation() -> None:
    """upstream 0.3.1 legacy/parsers/xml_parser.py: a field is a name or a non-empty tuple of
    names; only canonical names must be unique."""
    with pytest.raises(ValueError):
        XMLParser([()])
    with pytest.raises(TypeError):
        XMLParser([("a", 1)])
    with pytest.raises(TypeError):
        XMLParser([["a"]])
    with pytest.raises(ValueError):
        XMLParser(["a", ("a", "b")])
    XMLParser(["a", ("b", "a")])  # an alternative may repeat a canonical name


def test_xml_first_vs_last_match() -> None:
    """upstream 0.3.1 legacy/parsers/xml_parser.py: `parse_answer` of a string takes the last
    block, of a message its first block."""
    p = XMLParser(["answer"])
    text = "<answer>1</answer> then <answer>2</answer>"
    assert p.parse(text).answer == "1"
    assert p.parse(text, last=True).answer == "2"
    assert p.parse_answer(text) == "2"
    assert p.parse_answer(msgs(text)) == "1"


def test_xml_parse_answer_scans_messages_backwards() -> None:
    """upstream 0.3.1 legacy/parsers/xml_parser.py: the newest assistant message with the
    `answer_field` tag itself (not an alternative); `extract_fn` is not applied."""
    p = XMLParser(["think", ("answer", "final")], extract_fn=str.upper)
    conv = msgs("<answer>old</answer>", "<final>new</final>", "no answer here")
    assert p.parse_answer(conv) == "old"
    assert p.parse_answer(msgs("<think>only</think>")) is None
    assert p.parse_answer(msgs()) is None
    listed = msgs([{"type": "text", "text": "<answer>"}, {"type": "text", "text": "7</answer>"}])
    assert p.parse_answer(listed) == "7"
    custom = XMLParser(["reasoning", "code"], answer_field="code")
    assert custom.parse_answer("<code>print(1)</code>") == "print(1)"
    tool = XMLParser(["think", ("tool", "answer")])
    assert tool.parse_answer(msgs("<tool>{}</tool>")) is None
    assert tool.parse_answer(msgs("<answer>5</answer>")) == "5"
    assert XMLParser(["x"], answer_field="nope").parse_answer("<x>1</x>") is None


def test_xml_format_and_format_str() -> None:
    """upstream 0.3.1 legacy/parsers/xml_parser.py: `format` writes every field with its
    canonical tag, raises ValueError on a missing field and ignores unknown names;
    `get_format_str` lists alternatives as `<[ a | b ]>`."""
    p = XMLParser(["think", ("answer", "final")])
    assert p.format(think="t", final="a") == "<think>\nt\n</think>\n<answer>\na\n</answer>"
    assert p.format(think="t", answer="x", final="y", nope=1) == (
        "<think>\nt\n</think>\n<answer>\nx\n</answer>"
    )
    with pytest.raises(ValueError, match="Missing value for field 'think'"):
        p.format(answer="a")
    with pytest.raises(ValueError, match="'answer'"):
        p.format(think="t", answer=None)
    assert p.get_format_str() == (
        "<think>\n...\n</think>\n<[ answer | final ]>\n...\n</[ answer | final ]>"
    )
    assert XMLParser(["a"]).get_format_str() == "<a>\n...\n</a>"
    assert p.parse(p.format(think="t", answer="a")).answer == "a"


def test_xml_format_reward() -> None:
    """upstream 0.3.1 legacy/parsers/xml_parser.py, identical at v0.1.8 (values measured against
    0.3.1): per assistant message 0.4 x the share of fields present (only when one has a full
    block), 0.2 always (its spacing check cannot fail), 0.2 for starting with the first field's
    tag, 0.2 for ending with the last field's; averaged over assistant messages."""
    p = XMLParser(["think", "answer"])
    f = p.get_format_reward_func()
    assert f.__name__ == "format_reward_func"
    perfect = p.format(think="reason", answer="42")
    assert f(msgs(perfect)) == 1.0
    assert f(perfect) == 0.0  # a string holds no assistant message
    assert f(msgs("<think>r</think><answer>42</answer>")) == 1.0
    assert f(msgs("<answer>\n42\n</answer>")) == pytest.approx(0.2 + 0.2 + 0.2)
    assert f(msgs("The answer is <answer>42</answer>.")) == pytest.approx(0.4)
    assert f(msgs("plain text")) == pytest.approx(0.2)
    assert f(msgs("")) == pytest.approx(0.2)
    assert f(msgs("<think>x")) == pytest.approx(0.4)  # a stray tag: no full block, but starts
    assert f(msgs("<think>x</think> <answer>")) == pytest.approx(0.8)  # stray tag counts
    assert f(msgs()) == 0.0
    assert f(msgs(perfect, "plain text")) == pytest.approx(0.6)
    alt = XMLParser(["think", ("answer", "final")]).get_format_reward_func()
    assert alt(msgs("<think>\nr\n</think>\n<final>\n1\n</final>")) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so \\boxed{B}", "B"),
        ("\\boxed{(C)}", "C"),
        ("\\boxed{D.}", "D"),
        ("$\\boxed{\\text{A}}$", "A"),
        ("<think>maybe \\boxed{A}</think> final: \\boxed{B}", "B"),
        ("\\boxed{B. 42}", ""),  # option text is not a letter
        ("\\boxed{b}", ""),
        ("\\boxed{AB}", ""),
        ("\\boxed{E}", ""),  # not one of the options
        ("<think>\\boxed{A} and still thinking", ""),  # reasoning cut off
        ("no box at all: B", ""),
    ],
)
def test_extract_boxed_choice(text, expected):
    assert vf.extract_boxed_choice(text, "ABCD") == expected


def test_strip_reasoning_with_and_without_an_injected_think():
    assert vf.strip_reasoning("<think>a</think>answer") == "answer"
    assert vf.strip_reasoning("a (template opened the think)</think>answer") == "answer"
    assert vf.strip_reasoning("plain answer") == "plain answer"
    assert vf.strip_reasoning("<think>never closed") == ""
    assert vf.strip_reasoning(None) == ""


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("A", "A"),
        ("  C\n", "C"),
        ("The answer matches.\nFinal Judgment: \\boxed{A}", "A"),
        ("Final Judgment: \\boxed{\\text{B}}.", "B"),
        ("$\\boxed{ C }$", "C"),
        ("reasoning</think>Final Judgment: \\boxed{A}", "A"),
        ("<think>\\boxed{A}", None),  # the reasoning never ended
        ("\\boxed{A} -- on second thought, B", None),  # second thoughts after the box
        ("\\boxed{B} then \\boxed{A} wait", None),
        ("\\boxed{AB}", None),
        ("\\boxed{D}", None),  # not one of the grades
        ("the answer is correct, A", None),  # a verdict in prose
        ("a", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_grade_is_strict(reply, expected):
    assert vf.parse_grade(reply) == expected


def test_parse_grade_with_other_grades():
    assert vf.parse_grade("\\boxed{Y}", grades="YN") == "Y"
    assert vf.parse_grade("\\boxed{A}", grades="YN") is None


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("Final Judgment: \\boxed{A} - CORRECT", "A"),
        ("Final Judgment: \\boxed{B} - INCORRECT.", "B"),
        ("\\boxed{C} -REPETITIVE", "C"),
        ("\\boxed{C} - REFUSAL **", "C"),
        ("\\boxed{A} - INCORRECT", None),  # the label names another grade
        ("\\boxed{B} - CORRECT", None),
        ("\\boxed{A} - CORRECT, or maybe B", None),  # second thoughts after the label
        ("\\boxed{A} - correct", None),  # labels are the prompt's upper-case words
        ("\\boxed{A} - PERFECT", None),
    ],
)
def test_parse_grade_reads_compass_verifier_labels_that_agree(reply, expected):
    """CompassVerifier's prompts end "\\boxed{X} - LABEL"; the label must name the grade."""
    assert vf.parse_grade(reply, labels=vf.COMPASS_VERIFIER_LABELS) == expected
    assert vf.parse_grade(reply) is None  # without labels, anything after the box is refused


def test_compass_verifier_prompt_source_is_pinned():
    source = vf.COMPASS_VERIFIER_COT
    assert source.name == "CV_COT_PROMPT"
    assert "/open-compass/CompassVerifier/c5d6700ae5a820ed1232c847a57e7060d130b7df/" in source.url
    assert source.placeholders == {"gold_answer": "answer", "llm_response": "response"}
    assert vf.JudgeFallbackRubric.grade_labels is vf.COMPASS_VERIFIER_LABELS


def test_judge_fallback_build_judge_from_environment_arguments(tmp_path):
    parser = vf.Parser()
    own = "Q: {question}\nGold: {answer}\nCandidate: {response}\nEnd with \\boxed{A|B|C}."
    assert (
        vf.JudgeFallbackRubric.build_judge(parser, model=None, prompt=own, default_prompt=own)
        is None
    )
    with pytest.raises(vf.ConfigError, match="need judge_model"):
        vf.JudgeFallbackRubric.build_judge(
            parser, model=None, prompt=own, default_prompt=own, base_url="http://h/v1"
        )
    with pytest.raises(vf.ConfigError, match="judge_prompt needs judge_model"):
        vf.JudgeFallbackRubric.build_judge(parser, model=None, prompt="x", default_prompt=own)
    judge = vf.JudgeFallbackRubric.build_judge(
        parser, model="m", prompt=own, default_prompt=own, base_url="http://h/v1", timeout=7.0
    )
    assert isinstance(judge, vf.JudgeRubric) and judge.judge_prompt == own
    assert judge.judge_client.api_key == "EMPTY"  # no key variable: upstream's rule
    published = tmp_path / "prompts.py"
    published.write_text('CV = """Gold {gold} vs {cand}; {question}"""\n')
    source = vf.PromptSource(
        url=published.as_uri(), name="CV", placeholders={"gold": "answer", "cand": "response"}
    )
    official = vf.JudgeFallbackRubric.build_judge(
        parser, model="m", prompt="official", default_prompt=own, official=[source]
    )
    assert official.judge_prompt == "Gold {answer} vs {response}; {question}"
    with pytest.raises(vf.ConfigError, match="placeholders"):
        vf.JudgeFallbackRubric.build_judge(parser, model="m", prompt="no slots", default_prompt=own)
