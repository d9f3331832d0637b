"""检索评测：用 eval_questions.json 里标好答案的问题，量一量关键词路由，再和 BM25 并排比一比。

    $ python3 checks/evaluate.py                       # 用套件自带的资料
    $ python3 checks/evaluate.py --documents my.json   # 用你改过的另一份资料

打印两种检索的 recall@3、精确率、可回答问题的零命中率、无关问题的误命中率，再逐条列出关键词路由的漏检和误检。
BM25 只用来对比：套件的检索器仍然是关键词路由。不联网，不需要密钥。
"""
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

from kit_helpers import parse_tool_options, run_tool

import retrieval_qa
from model_reply_assistant import KitError

QUESTIONS = Path(__file__).resolve().parent / "eval_questions.json"
BM25_K1, BM25_B = 1.5, 0.75   # BM25 的常用默认值，没有为这份资料调过


# ---------- 对比用的 BM25：字二元组当作词 ----------

def tokens(text):
    """比较用的单位：一个英文词或一串数字算一个，一个汉字算一个（全角先变半角、不分大小写）。"""
    return re.findall(r"[a-z0-9]+|[^\W_]", retrieval_qa.nfkc(text).casefold())


def bigrams(text):
    units = tokens(text)
    return set(zip(units, units[1:]))


def bm25_retrieve(question, documents, limit=retrieval_qa.MAX_HITS):
    """和关键词路由同样最多取 3 条；得分为 0 的不算命中，同分按 id 排。"""
    texts = [pair_list(record["title"] + " " + record["text"]) for record in documents]
    average = sum(len(text) for text in texts) / len(texts)
    frequency = Counter(term for text in texts for term in set(text))
    wanted = bigrams(question)
    scored = []
    for record, text in zip(documents, texts):
        counts, score = Counter(text), 0.0
        for term in wanted & set(counts):
            idf = math.log(1 + (len(texts) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = counts[term]
            score += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * len(text) / average))
        if score > 0:
            scored.append((-score, record["id"]))
    return [record_id for _, record_id in sorted(scored)[:limit]]


def pair_list(text):
    units = tokens(text)
    return list(zip(units, units[1:]))


# ---------- 指标 ----------

def measure(questions, retrieve):
    """retrieve(question) -> 命中的 id 列表。返回指标和每个问题的命中。"""
    answerable = [q for q in questions if q["expected"]]
    off_topic = [q for q in questions if not q["expected"]]
    results = [(q, retrieve(q["question"])) for q in questions]
    expected_total = sum(len(q["expected"]) for q in answerable)
    found = sum(len(set(q["expected"]) & set(hits)) for q, hits in results)
    returned = sum(len(hits) for _, hits in results)
    return {
        "recall": (found, expected_total),
        "precision": (found, returned),
        "zero_hit": (sum(1 for q, hits in results if q["expected"] and not hits), len(answerable)),
        "false_hit": (sum(1 for q, hits in results if not q["expected"] and hits), len(off_topic)),
    }, results


def ratio(pair):
    part, whole = pair
    return f"{part}/{whole} = {part / whole:.0%}" if whole else "—"


# ---------- 报告 ----------

def report(documents, questions):
    matched = {}   # (问题, 片段) -> 命中词：检索一次，误检清单直接拿来用

    def keyword_route(question):
        hits = retrieval_qa.retrieve(question, documents)
        matched.update({(question, hit["id"]): hit["matched"] for hit in hits})
        return [hit["id"] for hit in hits]

    keyword_metrics, keyword_results = measure(questions, keyword_route)
    bm25_metrics, _ = measure(questions, lambda question: bm25_retrieve(question, documents))
    lines = [f"{len(questions)} 个问题（{sum(1 for q in questions if q['expected'])} 个可回答，"
             f"{sum(1 for q in questions if not q['expected'])} 个资料里没有答案），{len(documents)} 个片段", "",
             "| 指标 | 关键词路由 | BM25（字二元组，只作对比） |", "|---|---|---|"]
    names = {"recall": "recall@3：应命中的片段找回了多少", "precision": "精确率：命中的片段里有多少是对的",
             "zero_hit": "零命中率：可回答的问题一条也没命中", "false_hit": "误命中率：资料里没有答案的问题却命中了"}
    for key, name in names.items():
        lines.append(f"| {name} | {ratio(keyword_metrics[key])} | {ratio(bm25_metrics[key])} |")
    by_id = {record["id"]: record for record in documents}
    lines += ["", "关键词路由的漏检（应当命中却没命中）："]
    for q, hits in keyword_results:
        for missing in (i for i in q["expected"] if i not in hits):
            keywords = "、".join(by_id[missing]["keywords"]) if missing in by_id else "（资料里没有这个 id）"
            lines.append(f"  {q['question']}  漏了 {missing}，它的关键词：{keywords}")
    lines += ["", "关键词路由的误检（命中了不该命中的）："]
    for q, hits in keyword_results:
        for extra in (i for i in hits if i not in q["expected"]):
            lines.append(f"  {q['question']}  误中 {extra}，命中词：{'、'.join(matched[q['question'], extra])}")
    return "\n".join(lines)


def main(argv):
    options = parse_tool_options(argv, "用法：python3 checks/evaluate.py [--documents PATH]", __doc__, values=("--documents",))
    path = options["--documents"] or retrieval_qa.DOCUMENTS_PATH
    try:
        documents = retrieval_qa.load_documents(path)
    except KitError as error:
        print(error, file=sys.stderr)
        return 2
    shown = retrieval_qa.shown_path(path)
    retrieval_qa.print_warnings(retrieval_qa.document_warnings(documents), shown)   # 和运行 retrieval_qa.py 时一样：先说资料哪里可疑
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8-sig"))
    labelled = {i for q in questions for i in q["expected"]}
    if not labelled & {record["id"] for record in documents}:
        print("注意：评测问题标注的片段编号，在这份资料里一个也没有；这些问题是为样例资料写的，数字没有意义。",
              file=sys.stderr)
    print(f"资料：{shown}；问题：checks/{QUESTIONS.name}")
    print(report(documents, questions))
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
