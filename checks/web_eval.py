"""第 07 课的量具：去重的阈值在标注过的结果对上错几次，来源在标注过的问题上找得全不全（离线，用假搜索接口的网页）。

    $ python3 checks/web_eval.py             # 当前阈值的成绩，和几种阈值的对比
    $ python3 checks/web_eval.py --details   # 再列出每个去重错了的结果对、每个漏了正确来源的问题
    $ python3 checks/web_eval.py --live      # 来源那一项改成真的请求搜索接口（SEARCH_PROVIDER、SEARCH_API_URL……，
                                             # 第 07 课的假搜索接口也行），每秒最多 LIVE_RATE 次，不重试失败的问题

数据都是没看过程序的人写的：checks/dedupe_pairs.json（两条结果是不是同一篇，same 为真就该合并），
checks/web_questions.json（问题，和真正回答得了它的网址 answers_in），网页在 checks/web_pages.json（假搜索接口也用它）。
不联网，不需要密钥（--live 除外）。退出码 0；用法不对为 2；--live 请求不了搜索接口（没设置、连不上）为 3。
"""
import contextlib
import io
import json
import re
import sys
from unittest import mock

from kit_helpers import CHECKS_DIR, Measured, parse_tool_options, run_tool

import retrieval_qa
from stand_in_search import matching, shaped

USAGE = "用法：python3 checks/web_eval.py [--details] [--live]"
LIVE_RATE = 2.0   # --live 每秒最多请求几次：四十几个问题一口气发出去，免得碰上对方的限流
PAIRS = CHECKS_DIR / "dedupe_pairs.json"
QUESTIONS = CHECKS_DIR / "web_questions.json"
ANSWERS = CHECKS_DIR / "web_answers.json"
SPANS = CHECKS_DIR / "answer_spans.json"   # 每个有答案的问题，回答它最少要看的那一句（从正确网页的摘要里照抄）
BUDGETS = (40, 80, 120, 240)   # 每条来源的摘录上限：量摘录留没留住答案
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def dedupe_errors(pairs, threshold):
    """(该合并没合并的, 不该合并却合并了的)：每个结果对交给 dedupe()，看它留下一条还是两条。"""
    missed, merged = [], []
    with mock.patch.object(retrieval_qa, "DUPLICATE", threshold):
        for pair in pairs:
            kept, _ = retrieval_qa.dedupe([dict(pair["a"], published=None), dict(pair["b"], published=None)])
            if pair["same"] and len(kept) == 2:
                missed.append(pair)
            elif not pair["same"] and len(kept) == 1:
                merged.append(pair)
    return missed, merged


def sources_for(question, policy=None):
    """一个问题在程序里得到的来源：假搜索接口会给的结果（博查的格式）→ 统一字段 → web_sources()。policy 是域名名单。"""
    results = retrieval_qa.adapt("bocha", shaped("bocha", matching(question, retrieval_qa.SEARCH_COUNT)))
    with contextlib.redirect_stderr(io.StringIO()):
        return retrieval_qa.web_sources(question, results, policy)[0]


def live_sources_for():
    """--live：真的请求搜索接口，用令牌桶限速（批量跑几十个问题时别把对方的额度一下用光）。返回和 sources_for 一样的函数。"""
    target = retrieval_qa.search_target()
    key = retrieval_qa.read_search_key(target)
    bucket = retrieval_qa.TokenBucket(rate=LIVE_RATE, burst=2)

    def search(question):
        bucket.take()
        with contextlib.redirect_stderr(io.StringIO()):
            results = retrieval_qa.search_web(question, target, key)
            return retrieval_qa.web_sources(question, results)[0]
    return search


def source_figures(questions, search=None):
    """[(问题, 来源, 找到正确来源没有, 来源里正确的几条)]，正确 = 归一化以后在 answers_in 里。"""
    rows = []
    for item in questions:
        right = {retrieval_qa.normalize_url(url) for url in item["answers_in"]}
        sources = (search or sources_for)(item["question"])
        good = [source for source in sources if retrieval_qa.normalize_url(source["url"]) in right]
        rows.append((item, sources, bool(good), len(good)))
    return rows


def snippet_recall(spans, budget):
    """每条来源的摘录上限是 budget 字时，有几个问题的答案句还完整地留在某条编号的来源里。返回 (留住的, 问题数)。
    量过的和 judge_answers 一样记在 checks/measured.json 里（kit_helpers.Measured）。"""

    def measure(budget):
        with mock.patch.object(retrieval_qa, "SNIPPET_BUDGET", budget):
            return sum(any(re.sub(r"\s+", "", span["answer_text"]) in re.sub(r"\s+", "", source["snippet"])
                           for source in sources_for(span["question"])) for span in spans)

    [kept] = Measured("snippet-recall").results([budget], lambda budget: [spans, budget], measure)
    return kept, len(spans)


def web_hits_for(question):
    """和 retrieval_qa.web_hits 一样的命中片段，只是来源来自 sources_for（不开假搜索接口）。"""
    sources = sources_for(question)
    return [retrieval_qa.source_hit(source) for source in sources], sources


def judge_answers(answers):
    """每份标注过的回答真的走一遍 retrieval_qa.py --web --check-draft（在进程里；搜索一步换成 web_hits_for）。
    返回 [(标注, 程序的判定, problems)]。量过的记在 checks/measured.json 里（kit_helpers.Measured）。"""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as directory:
        known = Measured("web-answers").results(
            answers, lambda item: item, lambda item: judge_answer(item, Path(directory) / "answer.json"))
    return [(item, *result) for item, result in zip(answers, known)]


def judge_answer(item, path):
    """一份回答：(状态, problems)。"""
    path.write_text(json.dumps(item["answer"], ensure_ascii=False), encoding="utf-8")
    hits, sources = web_hits_for(item["question"])
    out = io.StringIO()
    with mock.patch.object(retrieval_qa, "web_hits", lambda *args, **kwargs: (hits, sources, [], None)), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main(["--web", "--check-draft", str(path), item["question"]])
    result = json.loads(out.getvalue())
    return [result["status"], result["problems"]]


def answer_figures(verdicts):
    """标注的每一类里，程序判成了什么：{标注: {判定: 份数}}。"""
    table = {}
    for item, status, _ in verdicts:
        table.setdefault(item["label"], {}).setdefault(status, 0)
        table[item["label"]][status] += 1
    return table


def measure_everything(pick=lambda items: items):
    """检查和这个工具要的第 07 课的结果都量一遍：各种摘录上限下留住的答案句、pick 选出的标注过的回答
    （grounding_eval.measure_everything 用）。"""
    spans = json.loads(SPANS.read_text(encoding="utf-8-sig"))
    for budget in sorted({*BUDGETS, retrieval_qa.SNIPPET_BUDGET}):
        snippet_recall(spans, budget)
    judge_answers(pick(json.loads(ANSWERS.read_text(encoding="utf-8-sig"))))


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, flags=("--details", "--live"))
    pairs = json.loads(PAIRS.read_text(encoding="utf-8-sig"))
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8-sig"))
    same = sum(1 for pair in pairs if pair["same"])
    print(f"去重：{len(pairs)} 对结果（{same} 对是同一篇，{len(pairs) - same} 对是不同的来源），阈值 DUPLICATE = {retrieval_qa.DUPLICATE}")
    print("| 阈值 | 该合并没合并 | 不该合并却合并了 |\n|---|---|---|")
    for threshold in THRESHOLDS:
        missed, merged = dedupe_errors(pairs, threshold)
        mark = "（现在）" if threshold == retrieval_qa.DUPLICATE else ""
        print(f"| {threshold}{mark} | {len(missed)}/{same} | {len(merged)}/{len(pairs) - same} |")
    rows = source_figures(questions, live_sources_for() if options["--live"] else None)
    answerable = [row for row in rows if row[0]["answers_in"]]
    found = sum(1 for row in answerable if row[2])
    numbered = sum(len(row[1]) for row in answerable)
    right = sum(row[3] for row in answerable)
    spans = json.loads(SPANS.read_text(encoding="utf-8-sig"))
    where = f"真的请求 {retrieval_qa.search_target()['url']}，每秒最多 {LIVE_RATE:g} 次" if options["--live"] else "假搜索接口的网页，在进程里"
    print(f"\n来源（{where}）：{len(questions)} 个问题，{len(answerable)} 个有答案、{len(questions) - len(answerable)} 个没有")
    print(f"  找到至少一条正确来源：{found}/{len(answerable)} = {found / len(answerable):.0%}")
    print(f"  编号的来源里正确的：{right}/{numbered} = {right / max(1, numbered):.0%}（其余是过时的、说错的或不相干的页，靠模型看日期和出处核对）")
    recall = [(budget, *snippet_recall(spans, budget)) for budget in BUDGETS]
    print("  摘录留住了答案句的问题（每条来源的摘录上限不同时）：" + "；".join(
        f"{budget} 字{'（现在）' if budget == retrieval_qa.SNIPPET_BUDGET else ''} {kept}/{total}" for budget, kept, total in recall))
    answers = json.loads(ANSWERS.read_text(encoding="utf-8-sig"))
    verdicts = judge_answers(answers)
    table = answer_figures(verdicts)
    print(f"\n回答：{len(answers)} 份（没看过程序的人照着编号的来源写的，标着如实、引用写错、没有依据），走 --web --check-draft：")
    print("| 标注 | 份数 | draft | needs_review | rejected | missing |\n|---|---|---|---|---|---|")
    for label in ("faithful", "wrong_citation", "unsupported"):
        counts = table.get(label, {})
        print(f"| {label} | {sum(counts.values())} | " + " | ".join(str(counts.get(status, 0))
                                                           for status in ("draft", "needs_review", "rejected", "missing")) + " |")
    if options["--details"]:
        missed, merged = dedupe_errors(pairs, retrieval_qa.DUPLICATE)
        print("\n该合并没合并的：")
        for pair in missed:
            print(f"  - {pair['a']['title']} ／ {pair['b']['title']}（{pair['kind']}）")
        print("不该合并却合并了的：")
        for pair in merged:
            print(f"  - {pair['a']['title']} ／ {pair['b']['title']}（{pair['kind']}）")
        print("回答判得不对的（如实的被标出，错的没被标出）：")
        for item, status, problems in verdicts:
            wrong = status in ("needs_review", "rejected") if item["label"] == "faithful" else status in ("draft", "missing")
            if wrong:
                print(f"  - [{item['label']}/{item['kind']}] {item['answer'].get('draft')} → {status} {problems[:1]}")
        print("没找到正确来源的问题：")
        for item, sources, ok, _ in answerable:
            if not ok:
                print(f"  - {item['question']}：得到 {'、'.join(source['url'] for source in sources) or '没有来源'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
