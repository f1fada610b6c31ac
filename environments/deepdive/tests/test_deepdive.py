"""deepdive: search index, browsing tools, grading, scripted research agents, HTTP search, vf-eval."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import deepdive as dd
import pytest
from aiohttp import web

import verifiers as vf
from verifiers.testing import Fault, ScriptedServer, serve_app
from verifiers.testing.responders import Reply, ScriptResponder, last_text

WIKI = dd.DEFAULT_BASE_URL


# -- helpers ---------------------------------------------------------------------------------
_JUDGE_FIELDS = re.compile(
    r"Ground truth answer:\n```\n(.*?)\n```\n\nResponse:\n```\n(.*?)\n```", re.S
)


def judge_fields(body) -> tuple[str, str]:
    m = _JUDGE_FIELDS.search(last_text(body))
    assert m, last_text(body)
    return m.group(1), m.group(2)


def fair_judge(body) -> str:
    """A judge that really compares the ground truth with the response it is given."""
    gold, response = judge_fields(body)
    return "yes" if dd.normalize_answer(gold) == dd.normalize_answer(response) else "no"


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


class ChainAgent:
    """A scripted researcher that reads the tool results: each step is
    ("search", query) | ("click_result", title) | ("follow", link text) | ("finish", answer)
    | ("say", text). `click_result` clicks the search result with that title by its index;
    `follow` opens the URL of the page link with that text. Steps run in order; the plan is
    chosen by a phrase of the question."""

    def __init__(self, plans: dict[str, list[tuple[str, str]]]) -> None:
        self.plans = plans

    def __call__(self, body) -> Reply:
        messages = body["messages"]
        question = next(m["content"] for m in messages if m["role"] == "user")
        plan = next(p for key, p in self.plans.items() if key in question)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        kind, arg = plan[min(turn, len(plan) - 1)]
        last = messages[-1]["content"] if messages[-1]["role"] == "tool" else ""
        if kind == "search":
            return Reply(tool_calls=[call("search", query=arg)])
        if kind == "click_result":
            m = re.search(rf"Result (\d+): {re.escape(arg)}\nURL: ", last)
            assert m, f"no search result titled {arg!r} in:\n{last}"
            return Reply(tool_calls=[call("click", result_indices=[int(m.group(1))])])
        if kind == "follow":
            m = re.search(rf"\[\d+\] {re.escape(arg)} -> (\S+)", last)
            assert m, f"no link {arg!r} in:\n{last}"
            return Reply(tool_calls=[call("open", urls=[m.group(1)])])
        if kind == "finish":
            return Reply(tool_calls=[call("finish", final_answer=arg)])
        return Reply(content=arg)


FINISH_CALL = call("finish", final_answer="Dunmere")

OBSERVATORY_CHAIN = [
    ("search", "Varnholt Observatory"),
    ("click_result", "Varnholt Observatory"),
    ("follow", "Ilse Marrow"),
    ("follow", "Dunmere"),
    ("finish", "Dunmere"),
]


@pytest.fixture(scope="module")
def backend():
    return dd.LocalSearchBackend(dd.load_corpus(dd.CORPUS))


@pytest.fixture
async def judge():
    async with ScriptedServer(fair_judge) as srv:
        yield srv


def make_env(judge_srv, **kw):
    kw.setdefault("source", "sample")
    kw.setdefault("search_backend", "local")
    kw.setdefault("finish_with_tool", True)  # the scripted researchers answer with finish
    return dd.load_environment(judge_base_url=judge_srv.base_url, **kw)


async def run_one(env, agent, question_id: str, **kw):
    inputs = [r for r in env.eval_inputs() if r["info"]["id"] == question_id]
    assert len(inputs) == 1
    async with ScriptedServer(agent) as model:
        client = vf.OpenAIClient(model.base_url, api_key="x", retry_base_delay=0.01)
        try:
            out = await env.generate(inputs, client, "m", **kw)
        finally:
            await client.aclose()
    (row,) = out["outputs"]
    return row


def tool_texts(row) -> list[str]:
    return [m["content"] for m in row["completion"] if m["role"] == "tool"]


# -- corpus and search -----------------------------------------------------------------------
def test_bundled_corpus_and_sample_are_consistent(backend):
    assert len(backend.pages) >= 30
    links = sum(len(p.links) for p in backend.pages.values())
    assert links >= 100
    rows = [json.loads(x) for x in (dd.SAMPLE).read_text().splitlines()]
    assert len(rows) >= 6
    assert {"id", "question", "answer", "conversations"} <= set(rows[0])
    text = " ".join(p.plain for p in backend.pages.values())
    for row in rows:  # every gold answer is written somewhere in the corpus
        assert dd.normalize_answer(row["answer"]) in dd.normalize_answer(text), row


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("Varnholt Observatory", "Varnholt Observatory"),
        ("Ilse Marrow astronomer", "Ilse Marrow"),
        ("Marrow wool merchant manor", "Marrow Hall"),
        ("lens grinder Osric Feld", "Osric Feld"),
        ("Quillon Optics chief executive", "Quillon Optics"),
        ("seven arch stone bridge", "Brannoch Bridge"),
        ("hamlet lanterns willows brook", "Sallow Cross"),
        ("compact saloon", "Tessaly Heron"),
        ("astronomers born lighthouse keeper cottage", "Dunmere"),
        ("canal locks pleasure boats", "Pellgrave Canal"),
    ],
)
def test_search_ranks_the_right_page_first(backend, query, first):
    hits = backend.query(query, 5)
    assert hits[0]["title"] == first, [h["title"] for h in hits]
    assert hits[0]["link"] == backend.pages[hits[0]["link"]].url
    assert all(a["score"] <= b["score"] for a, b in itertools.pairwise(hits))


def test_search_results_text_and_limits(backend):
    env = dd.DeepDiveEnv(backend, dataset=dd.build_dataset([{"question": "q", "answer": "a"}]))
    state: dict = {}
    text = asyncio_run(env.search("Tessaly Motor Works", 3, state=state))
    blocks = text.split("\n\n---\n\n")
    assert len(blocks) == 3
    assert blocks[0].startswith(
        "Result 0: Tessaly Motor Works\nURL: " + WIKI + "Tessaly_Motor_Works"
    )
    assert blocks[2].startswith("Result 2: ")
    assert "Brennick" in blocks[0]
    assert state["last_search_result"]["organic"][0]["title"] == "Tessaly Motor Works"
    many = asyncio_run(env.search("Varnholt", 50, state={}))
    assert many.count("Result ") == env.max_search_results == 10
    assert asyncio_run(env.search("zzzqqq", state={})) == "No results returned for query: zzzqqq"
    assert backend.query("?!", 5) == []
    # FTS5 query syntax in a query is just words, never a syntax error
    assert backend.query('"Osk" AND (river*) NEAR -', 3)[0]["title"] == "Osk River"


def test_format_search_results_serper_shape():
    """Upstream's layout (prime-environments deepdive formatting.py, 2025-11): results from 0,
    sections between `---` lines, "People Also Ask" capped at 3, empty fields left out."""
    data = {
        "knowledgeGraph": {"title": "Osk", "type": "River", "attributes": {"Length": "212 km"}},
        "organic": [{"title": "A", "link": "https://a.example/", "snippet": "about a"}] * 4
        + [{"title": " ", "link": ""}],
        "peopleAlsoAsk": [{"question": f"q{i}?", "snippet": f"s{i}"} for i in range(5)],
    }
    text = dd.format_search_results("osk", data, 2)
    sections = text.split("\n\n---\n\n")
    assert sections[0] == "Knowledge Graph: Osk\nLength: 212 km"
    assert sections[1:3] == [f"Result {i}: A\nURL: https://a.example/\nabout a" for i in (0, 1)]
    assert sections[3] == "People Also Ask:\nQ: q0?\nA: s0\nQ: q1?\nA: s1\nQ: q2?\nA: s2"
    assert (
        dd.format_search_results("x", {"organic": data["organic"][4:]}, 5) == "Result 0: Untitled"
    )


# -- open / click ----------------------------------------------------------------------------
def asyncio_run(coro):
    import asyncio

    return asyncio.run(coro)


def local_env(backend, **kw):
    return dd.DeepDiveEnv(
        backend, dataset=dd.build_dataset([{"question": "q", "answer": "a"}]), **kw
    )


def test_open_reads_a_list_of_pages_in_order(backend):
    env = local_env(backend)
    state: dict = {}
    text = asyncio_run(env.open([WIKI + "Great_Lantern", WIKI + "Dunmere"], state=state))
    first, second = text.split("\n\n# Open Result 1\n")
    assert first.startswith(f"# Open Result 0\nTitle: Great Lantern\nURL: {WIKI}Great_Lantern\n\n")
    assert second.startswith(f"Title: Dunmere\nURL: {WIKI}Dunmere\n\n")
    m = re.search(r"Quill & Sons \[(\d+)\]", first)
    assert m and f"[{m.group(1)}] Quill & Sons -> {WIKI}Quill_and_Sons" in first
    # one URL given as a plain string is one page (upstream would iterate its characters)
    assert asyncio_run(env.open(WIKI + "Dunmere", state={})).startswith(
        "# Open Result 0\nTitle: Dunmere\n"
    )
    # the same page by bare address or by title
    for alias in ("fictopedia.example/wiki/Dunmere", "Dunmere", "dunmere"):
        assert asyncio_run(env.open([alias], state={})).startswith(
            "# Open Result 0\nTitle: Dunmere\n"
        )


def test_a_page_that_cannot_be_fetched_is_an_error_text_in_its_place(backend):
    env = local_env(backend)
    text = asyncio_run(env.open([WIKI + "Atlantis", WIKI + "Dunmere"], state={}))
    first, second = text.split("\n\n# Open Result 1\n")
    assert first.startswith(f"# Open Result 0\nError fetching {WIKI}Atlantis: ")
    assert second.startswith("Title: Dunmere\n")


def test_click_opens_results_of_the_last_search_by_index(backend):
    env = local_env(backend)
    state: dict = {}
    results = asyncio_run(env.search("Quill and Sons lens makers", state=state))
    titles = re.findall(r"^Result (\d+): (.+)$", results, re.M)
    index = next(int(i) for i, title in titles if title == "Quill & Sons")
    text = asyncio_run(env.click([index, 0], state=state))
    first, second = text.split("\n\n# Click Result 1\n")
    assert first.startswith("# Click Result 0\nTitle: Quill & Sons") and "Barnaby Quill" in first
    assert second.startswith(f"Title: {titles[0][1]}\n")


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda env, st: env.click([0], state=st), "No previous search results to open!"),
        (lambda env, st: env.open([], state=st), "non-empty list of URL strings"),
        (lambda env, st: env.open([3], state=st), "non-empty list of URL strings"),
        (lambda env, st: env.click(["a"], state=st), "list of result numbers"),
        (lambda env, st: env.search("   ", state=st), "non-empty string"),
    ],
)
def test_tool_input_errors_raise_with_a_clear_message(backend, action, message):
    with pytest.raises(Exception, match=message):
        asyncio_run(action(local_env(backend), {}))


def test_click_out_of_range(backend):
    env = local_env(backend)
    state: dict = {}
    asyncio_run(env.search("Tilde Aumann", 3, state=state))
    n = len(state["last_search_result"]["organic"])
    for bad in ([n], [-1], [0, n]):
        with pytest.raises(ValueError, match="Result index out of range"):
            asyncio_run(env.click(bad, state=state))


def test_pages_and_responses_are_capped(backend):
    env = local_env(backend, page_chars=1000)
    full = backend.pages[WIKI + "Annals_of_Varnholt"].text
    assert len(full) > 1000
    text = asyncio_run(env.open([WIKI + "Annals_of_Varnholt", WIKI + "Varnholt"], state={}))
    pages = text.split("\n\n# Open Result 1\n")
    tail = "\n...\n[truncated]"  # upstream's sentinel
    assert [len(p.removeprefix("# Open Result 0\n")) for p in pages] == [1000 + len(tail)] * 2
    assert all(p.endswith(tail) for p in pages)
    capped = local_env(backend, max_response_chars=200)
    found = asyncio_run(capped.search("Varnholt", state={}))
    assert len(found) == 200 + len(tail) and found.endswith(tail)


# -- corpus and dataset errors ---------------------------------------------------------------
def test_corpus_errors(tmp_path):
    (tmp_path / "A.md").write_text("# A\nSee [B](B).\n")
    with pytest.raises(vf.ConfigError, match=r"links to .*/B, which is not in the corpus"):
        dd.load_corpus(tmp_path)
    (tmp_path / "B.md").write_text("no title line\n")
    with pytest.raises(vf.ConfigError, match="must start with a '# Title' line"):
        dd.load_corpus(tmp_path)
    (tmp_path / "B.md").write_text("# B\nBack to [A](A) and [out](https://elsewhere.example/).\n")
    pages = dd.load_corpus(tmp_path)
    assert [p.title for p in pages] == ["A", "B"]
    assert pages[1].text == "Back to A [1] and out [2]."
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text(
        '{"url": "X", "title": "X", "text": "x"}\n{"url": "X", "title": "Y", "text": "y"}\n'
    )
    with pytest.raises(vf.ConfigError, match="repeats the page URL"):
        dd.load_corpus(jsonl)
    jsonl.write_text('{"url": "X", "title": "", "text": "x"}\n')
    with pytest.raises(vf.ConfigError, match=r"c.jsonl:1 needs non-empty string fields"):
        dd.load_corpus(jsonl)
    jsonl.write_text("{not json\n")
    with pytest.raises(vf.ConfigError, match="is not valid JSON"):
        dd.load_corpus(jsonl)
    with pytest.raises(vf.ConfigError, match="does not exist"):
        dd.load_corpus(tmp_path / "missing")


def test_custom_corpus_and_rows(tmp_path):
    corpus = tmp_path / "pages.jsonl"
    pages = [
        {"url": "Quorn", "title": "Quorn Mill", "text": "A mill run by [Ada](Ada_Vell)."},
        {"url": "Ada_Vell", "title": "Ada Vell", "text": "Miller, born in Tebbit."},
    ]
    corpus.write_text("\n".join(json.dumps(p) for p in pages))
    rows = [{"question": "Where was the miller of Quorn Mill born?", "answer": "Tebbit"}]
    env = dd.load_environment(source=rows, corpus=str(corpus), judge_model=None)
    state: dict = {}
    assert asyncio_run(env.search("Quorn mill", state=state)).startswith("Result 0: Quorn Mill")
    page = asyncio_run(env.click([0], state=state))
    assert "run by Ada [1]." in page and f"[1] Ada -> {WIKI}Ada_Vell" in page
    assert "born in Tebbit" in asyncio_run(env.open([WIKI + "Ada_Vell"], state=state))


def test_sample_dataset_rows():
    # no key, no network: local index + sample
    env = dd.load_environment(judge_model=None, finish_with_tool=True)
    assert isinstance(env.backend, dd.LocalSearchBackend)
    rows = env.eval_inputs()
    assert len(rows) == 8 and all(r["task"] == "deepdive" for r in rows)
    (message,) = rows[0]["prompt"]  # no system prompt by default
    assert message["role"] == "user"
    assert message["content"].startswith(rows[0]["info"]["raw_question"] + "\n\n")
    assert message["content"].endswith("then call finish with your final answer.")
    assert [t["name"] for t in env.tool_defs] == ["search", "open", "click", "finish"]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": 7, "question": "", "answer": "x"}], r"row 0 \(id 7\): 'question'"),
        (
            [{"question": "q?", "answer": "x"}, {"question": "q?", "answer": None}],
            "row 1: 'answer'",
        ),
        ([{"question": "q?"}], "lacks column"),
        ([], "lacks column"),
    ],
)
def test_broken_dataset_rows_fail_loudly(rows, message):
    with pytest.raises(vf.ConfigError, match=message):
        dd.load_environment(source=rows, judge_model=None)


def test_http_backend_needs_its_key(monkeypatch):
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    with pytest.raises(vf.MissingKeyError, match="SERPER_API_KEY"):
        dd.load_environment(search_backend="http", judge_model=None)
    with pytest.raises(vf.ConfigError, match="search_backend must be"):
        dd.load_environment(search_backend="bing", judge_model=None)


# -- grading ---------------------------------------------------------------------------------
def assistant(content=None, *calls):
    msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    return msg


FINISH = ("finish", json.dumps({"final_answer": " Dunmere "}))
SEARCH = ("search", json.dumps({"query": "a b"}))


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (
            [assistant(None, SEARCH), {"role": "tool", "content": "r"}, assistant(None, FINISH)],
            "Dunmere",
        ),
        ([assistant("<think>hmm</think>It is \\boxed{Dunmere}.")], "Dunmere"),
        ([assistant("It is Dunmere.")], ""),  # strict: no box, no answer
        ([assistant("<think>It is \\boxed{Dunmere}")], ""),  # unclosed reasoning
        # the chat template opened the reasoning: only its `</think>` is in the completion
        ([assistant("It may be \\boxed{Osk}.</think>It is \\boxed{Dunmere}.")], "Dunmere"),
        # reasoning reopened after the answer and cut off: the box inside it is no answer
        ([assistant("<think>a</think>\\boxed{Dunmere}<think>or \\boxed{Osk}")], ""),
        ([assistant("\\boxed{Dunmere}", SEARCH)], ""),  # still researching: no answer
        ([assistant(None, ("finish", "{broken json"))], ""),
        ([assistant(None, ("finish", json.dumps({"answer": "Dunmere"})))], ""),
        ([], ""),
        ("\\boxed{41}", "41"),
    ],
)
def test_parser_finds_the_final_answer(completion, expected):
    assert dd.DeepDiveParser().parse_answer(completion) == expected


@pytest.mark.parametrize(
    ("verdict", "score"),
    [
        ("yes", 1.0),
        ("Yes.", 1.0),
        ("  YES, the response names the same village", 1.0),
        ("<think>the response says yes? no: different</think>no", 0.0),
        ("the response says no? yes: same</think>yes", 1.0),  # only the closing tag
        ("no", 0.0),
        ("No, although one might say yes", 0.0),  # a substring test for "yes" would say 1
        ("**no**", 0.0),
    ],
)
def test_parse_verdict(verdict, score):
    assert dd.parse_verdict(verdict) == score


@pytest.mark.parametrize(
    "verdict",
    [
        "",
        "maybe",
        "The response is correct.",
        "yes</think>",  # nothing after the reasoning
        "<think>yes, the same village",  # reasoning cut off: no verdict yet
    ],
)
def test_unparseable_verdict_is_a_judge_error(verdict):
    with pytest.raises(vf.JudgeError, match="neither yes nor no"):
        dd.parse_verdict(verdict)


@pytest.mark.parametrize(
    ("answer", "gold", "info", "score"),
    [
        ("the Lantern Fair", "the Lantern Fair", {}, 1.0),
        ("Lantern fair.", "the Lantern Fair", {}, 1.0),
        ("Lantern Festival", "the Lantern Fair", {}, 0.0),
        ("Pellgrave", "Pellgrave Canal", {}, 0.0),
        ("Sollis", "Marguerite Sollis", {"aliases": ["Sollis", "M. Sollis"]}, 1.0),
        ("", "Dunmere", {}, 0.0),
    ],
)
def test_exact_match_grader(answer, gold, info, score):
    completion = [assistant(None, ("finish", json.dumps({"final_answer": answer})))]
    assert dd.exact_match_reward(completion, gold, info) == score


def test_redundancy_penalty_formula():
    def searches(*queries, extra_first=False):
        out = []
        for q in queries:
            calls = [("search", json.dumps({"query": q}))]
            if extra_first:
                calls.insert(0, ("open", json.dumps({"url": "x"})))
            out += [assistant(None, *calls), {"role": "tool", "content": "r"}]
        return out

    assert dd.redundancy_penalty(searches("a b", "a b", "c")) == pytest.approx(1 / 6)
    assert dd.redundancy_penalty(searches("a b", "a b")) == pytest.approx(0.5)
    assert dd.redundancy_penalty(searches("a b c", "a b d")) == pytest.approx(0.5 / 2)
    assert dd.redundancy_penalty(searches("only one")) == 0.0
    assert dd.redundancy_penalty(searches("x", "x", extra_first=True)) == 0.0  # first call only
    assert dd.search_queries(searches("a b", "c")) == ["a b", "c"]


# -- scripted research agents ----------------------------------------------------------------
async def test_multi_hop_agent_finishing_right_scores_one(judge):
    env = make_env(judge)
    row = await run_one(env, ChainAgent({"observatory on a ridge": OBSERVATORY_CHAIN}), "1")
    assert row["error"] is None, row["error"]
    assert row["reward"] == 1.0
    assert row["stop_condition"] == "has_submitted"
    assert row["final_answer"] == "Dunmere"
    texts = tool_texts(row)
    assert texts[0].startswith("Result 0: Varnholt Observatory")
    assert texts[1].startswith("# Click Result 0\nTitle: Varnholt Observatory")
    assert texts[2].startswith("# Open Result 0\nTitle: Ilse Marrow")
    assert texts[3].startswith("# Open Result 0\nTitle: Dunmere")
    assert texts[-1] == "Dunmere"  # finish echoes the answer, as upstream's does
    assert row["search_calls"] == 1 and row["click_calls"] == 1 and row["open_calls"] == 2
    assert row["finish_calls"] == 1
    (request,) = judge.requests
    gold, response = judge_fields(request)
    assert (gold, response) == ("Dunmere", "Dunmere")
    assert "observatory on a ridge" in last_text(request)


async def test_three_hop_chain(judge):
    env = make_env(judge)
    plan = [
        ("search", "Great Lantern telescope lens"),
        ("click_result", "Great Lantern"),
        ("follow", "Quill & Sons"),
        ("follow", "Quillon Optics"),
        ("follow", "Marguerite Sollis"),
        ("finish", "Marguerite Sollis"),
    ]
    row = await run_one(env, ChainAgent({"Great Lantern telescope": plan}), "2")
    assert row["reward"] == 1.0 and row["error"] is None
    assert "chief executive has been Marguerite Sollis" in tool_texts(row)[3]


async def test_wrong_answer_scores_zero_and_judge_sees_the_gold(judge):
    """Regression for the judge swap: the judge must get the dataset's gold answer as the
    ground truth. Given the model's answer in both slots, it would say yes to any guess."""
    env = make_env(judge)
    plan = [*OBSERVATORY_CHAIN[:3], ("finish", "Pellgrave")]  # stops one hop short
    row = await run_one(env, ChainAgent({"observatory on a ridge": plan}), "1")
    assert row["error"] is None and row["reward"] == 0.0
    (request,) = judge.requests
    assert judge_fields(request) == ("Dunmere", "Pellgrave")


async def test_boxed_answer_without_finish_tool(judge):
    env = make_env(judge, finish_with_tool=False)
    assert [t["name"] for t in env.tool_defs] == ["search", "open", "click"]
    plan = [*OBSERVATORY_CHAIN[:4], ("say", "The founder was born in \\boxed{Dunmere}.")]
    row = await run_one(env, ChainAgent({"observatory on a ridge": plan}), "1")
    assert row["reward"] == 1.0 and row["stop_condition"] == "no_tools_called"


@pytest.mark.parametrize(
    "final",
    ["I think the answer is Dunmere.", "<think>Dunmere, so \\boxed{Dunmere}", ""],
)
async def test_malformed_final_message_scores_zero_without_the_judge(judge, final):
    plan = [*OBSERVATORY_CHAIN[:2], ("say", final)]
    row = await run_one(make_env(judge), ChainAgent({"observatory on a ridge": plan}), "1")
    assert row["stop_condition"] == "no_tools_called"
    assert row["reward"] == 0.0 and row["error"] is None
    assert judge.requests == []


async def test_never_finishing_hits_max_turns_and_scores_zero(judge):
    env = make_env(judge, max_turns=4)
    agent = ChainAgent(
        {"observatory on a ridge": [("search", "observatory founder \\boxed{Dunmere}")]}
    )
    row = await run_one(env, agent, "1")
    assert row["stop_condition"] == "max_turns_reached"
    assert row["reward"] == 0.0 and row["error"] is None
    # the 4th turn's search is not run (the rollout stops as soon as the turn budget is
    # spent), but the model made it: `search_calls` counts the calls the model made, as
    # upstream's ToolMonitorRubric does
    assert row["num_turns"] == 4 and row["search_calls"] == 4
    assert judge.requests == []  # nothing to judge


async def test_redundant_queries_are_penalised(judge):
    env = make_env(judge, redundancy_penalty_weight=1.0)
    plan = [("search", "Varnholt Observatory"), ("search", "Varnholt Observatory founder")]
    plan += [("search", "Dunmere"), ("finish", "Dunmere")]
    row = await run_one(env, ChainAgent({"observatory on a ridge": plan}), "1")
    # word-set Jaccard: (2/3 + 0 + 0) / (3 * 2)
    penalty = (2 / 3) / 6
    assert row["metrics"]["redundancy_penalty"] == pytest.approx(penalty)
    assert row["reward"] == pytest.approx(1.0 - penalty)


async def test_tool_errors_go_back_to_the_model(judge):
    env = make_env(judge)
    first_turn = Reply(
        tool_calls=[
            call("click", result_indices=[0]),  # before any search
            call("open", urls=["https://fictopedia.example/wiki/Nowhere"]),
            call("search", query=5),
            call("fly", to="moon"),
            {"name": "open", "arguments": "{not json"},
        ]
    )
    agent = ScriptResponder([(lambda body: True, [first_turn, Reply(tool_calls=[FINISH_CALL])])])
    row = await run_one(env, agent, "1")
    errors = tool_texts(row)[:5]
    assert "No previous search results to open!" in errors[0]
    assert errors[1].startswith("# Open Result 0\nError fetching ") and "Nowhere" in errors[1]
    assert errors[2].startswith("Error: invalid arguments for tool 'search'")
    assert errors[3].startswith("Error: unknown tool 'fly'")
    assert "not valid JSON" in tool_texts(row)[4]
    assert row["error"] is None and row["reward"] == 1.0


async def test_judge_outage_is_an_infra_error_not_a_zero():
    env = dd.load_environment(
        source="sample",
        search_backend="local",
        judge_base_url="http://127.0.0.1:9/v1",  # nothing listens on the discard port
        finish_with_tool=True,
        judge_timeout=2.0,
        judge_max_retries=0,
    )
    row = await run_one(env, ChainAgent({"observatory on a ridge": OBSERVATORY_CHAIN}), "1")
    assert row["error"] is not None and row["error"]["infra"] is True
    assert math.isnan(row["reward"])


@pytest.mark.parametrize(("judge_max_retries", "attempts"), [(0, 1), (2, 3)])
async def test_judge_max_retries_bounds_requests_to_a_failing_judge(
    judge, judge_max_retries, attempts
):
    judge.add_fault(Fault(status=503, times=None))  # every judgement fails, retryably
    env = make_env(judge, judge_max_retries=judge_max_retries)
    row = await run_one(env, ChainAgent({"observatory on a ridge": OBSERVATORY_CHAIN}), "1")
    assert judge.request_count == attempts
    assert row["error"]["infra"] is True and math.isnan(row["reward"])
    assert f"failed after {attempts} attempts" in row["error"]["message"]


# -- the HTTP search backend against a real local server -------------------------------------
PAGES = {
    "/wiki/glass": (
        "text/html",
        "<html><head><title>Glass | Local Wiki</title><style>p{}</style></head><body>"
        "<script>var x = 1;</script><h1>Glass</h1><p>Glass is made from <a href='/wiki/sand'>"
        "sand</a> and <a href='https://other.example/soda'>soda ash</a>.</p>"
        "<ul><li>one &amp; two</li></ul></body></html>",
    ),
    "/wiki/sand": ("text/html", "<html><body><h1>Sand</h1><p>Grains of quartz.</p></body></html>"),
    "/notes.txt": ("text/plain", "plain notes"),
    "/paper.pdf": ("application/pdf", "%PDF-1.4 ..."),
}


@pytest.fixture
async def web_server():
    seen: list[dict] = []

    async def search(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append({"body": body, "key": request.headers.get("X-API-KEY")})
        if request.headers.get("X-API-KEY") != "secret":
            return web.json_response({"message": "Unauthorized."}, status=403)
        if body["q"] == "explode":
            return web.Response(status=503, text="upstream down")
        if body["q"] == "garbage":
            return web.Response(text="<html>not json</html>")
        base = f"http://{request.host}"
        organic = [
            {"title": "Glass", "link": f"{base}/wiki/glass", "snippet": "Glass is made from sand"},
            {"title": "Sand", "link": f"{base}/wiki/sand", "snippet": "Grains of quartz"},
        ]
        return web.json_response(
            {
                "organic": organic[: body["num"]],
                "peopleAlsoAsk": [{"question": "Is glass a liquid?", "snippet": "No."}],
            }
        )

    async def page(request: web.Request) -> web.Response:
        if request.path not in PAGES:
            return web.Response(status=404)
        ctype, text = PAGES[request.path]
        return web.Response(text=text, content_type=ctype)

    app = web.Application()
    app.router.add_post("/search", search)
    app.router.add_get("/{tail:.*}", page)
    async with serve_app(app) as base:
        yield base, seen


async def test_http_backend_search_open_click(web_server, monkeypatch):
    base, seen = web_server
    monkeypatch.setenv("DEEPDIVE_TEST_SEARCH_KEY", "secret")
    env = dd.load_environment(
        source="sample",
        search_backend="auto",
        search_url=base + "/search",
        serper_api_key_var="DEEPDIVE_TEST_SEARCH_KEY",
        judge_model=None,
    )
    assert isinstance(env.backend, dd.HTTPSearchBackend)
    state: dict = {}
    text = await env.search("glass", 1, state=state)
    assert seen[-1] == {"body": {"q": "glass", "num": 1}, "key": "secret"}
    assert text == (
        f"Result 0: Glass\nURL: {base}/wiki/glass\nGlass is made from sand\n\n---\n\n"
        "People Also Ask:\nQ: Is glass a liquid?\nA: No."
    )
    page = await env.click([0], state=state)
    assert page.startswith(
        f"# Click Result 0\nTitle: Glass | Local Wiki\nURL: {base}/wiki/glass\n\n"
    )
    assert "Glass is made from sand [1] and soda ash [2]." in page
    assert "one & two" in page and "var x" not in page and "p{}" not in page
    assert f"[1] sand -> {base}/wiki/sand" in page
    assert "[2] soda ash -> https://other.example/soda" in page
    sand = await env.open([f"{base}/wiki/sand"], state=state)
    assert sand.startswith(f"# Open Result 0\nTitle: Sand\nURL: {base}/wiki/sand")
    assert "Grains of quartz." in sand
    assert (await env.open([f"{base}/notes.txt"], state={})).endswith("plain notes")
    pdf = await env.open([f"{base}/paper.pdf"], state={})
    assert pdf.startswith(f"# Open Result 0\nError fetching {base}/paper.pdf: ")
    assert "application/pdf" in pdf
    assert "404" in await env.open([f"{base}/missing"], state={})
    local_file = await env.open(["file:///etc/passwd"], state={})
    assert "Error fetching file:///etc/passwd: " in local_file and "only http" in local_file
    assert "root:" not in local_file


async def test_http_backend_failures(web_server):
    base, _ = web_server
    good = dd.HTTPSearchBackend(base + "/search", "secret")
    with pytest.raises(dd.SearchAPIError, match="HTTP 503: upstream down"):
        await good.search("explode", 3)
    with pytest.raises(dd.SearchAPIError, match="not JSON"):
        await good.search("garbage", 3)
    with pytest.raises(dd.SearchAPIError, match="HTTP 403"):
        await dd.HTTPSearchBackend(base + "/search", "wrong").search("glass", 3)
    with pytest.raises(dd.SearchAPIError, match="failed: ClientConnectorError"):
        await dd.HTTPSearchBackend("http://127.0.0.1:9/search", "k", timeout=2).search("x", 1)


@pytest.mark.parametrize(("mode", "infra"), [("tool", False), ("infra", True)])
async def test_search_api_outage_as_tool_message_or_infra_error(web_server, judge, mode, infra):
    base, _ = web_server
    backend = dd.HTTPSearchBackend(base + "/search", "secret")
    env = make_env(judge, search_backend=backend, search_errors=mode)
    agent = ChainAgent({"observatory on a ridge": [("search", "explode"), ("finish", "Dunmere")]})
    row = await run_one(env, agent, "1")
    if infra:
        assert row["error"]["infra"] is True and row["error"]["error"] == "SearchAPIError"
        assert row["num_turns"] == 1 and judge.requests == []
    else:
        assert row["error"] is None and row["reward"] == 1.0
        assert "HTTP 503" in tool_texts(row)[0]


# -- vf-eval end to end ----------------------------------------------------------------------
PLANS = {
    "observatory on a ridge": OBSERVATORY_CHAIN,
    "Great Lantern telescope": [
        ("search", "Great Lantern telescope lens"),
        ("click_result", "Great Lantern"),
        ("follow", "Quill & Sons"),
        ("follow", "Quillon Optics"),
        ("finish", "Quill & Sons"),  # wrong: the firm, not its chief executive
    ],
    "transmission engineer": [
        ("search", "Quillon Optics chief executive"),
        ("click_result", "Marguerite Sollis"),
        ("follow", "Tessaly Motor Works"),
        ("follow", "Tessaly Heron"),
        ("finish", "the Tessaly Heron"),
    ],
    "seven-arch Brannoch Bridge": [
        ("search", "Brannoch Bridge engineer"),
        ("click_result", "Corvin Ashgrove"),
        ("finish", "Pellgrave Canal"),
    ],
}


def test_vf_eval_run(tmp_path, vf_eval_in_process):

    with ScriptedServer(fair_judge) as judge_srv, ScriptedServer(ChainAgent(PLANS)) as model:
        env_args = {
            "source": "sample",
            "search_backend": "local",
            "judge_base_url": judge_srv.base_url,
        }
        rows, meta = vf_eval_in_process(
            tmp_path,
            "deepdive",
            model.base_url,
            "-n",
            4,
            "-r",
            2,
            "--env-args",
            json.dumps(env_args),
        )
        judged = len(judge_srv.requests)
    assert len(rows) == 8 and meta["num_rollouts"] == 8
    by_id = {}
    for r in rows:
        assert r["error"] is None, r["error"]
        by_id.setdefault(r["info"]["id"], set()).add(r["reward"])
    assert by_id == {"1": {1.0}, "2": {0.0}, "3": {1.0}, "4": {1.0}}
    assert meta["avg_reward"] == pytest.approx(0.75)
    assert judged == 8


def test_installed_data_files_exist():
    root = Path(dd.__file__).parent / "data"
    assert (root / "sample.jsonl").is_file() and len(list((root / "corpus").glob("*.md"))) >= 30
