"""出处核对的实测：把人工标注的回答交给 retrieval_qa.py --check-draft，和标注对比。

    $ python checks/grounding_eval.py              # 标注集：混淆矩阵、各类的检出率、精确率和召回率
    $ python checks/grounding_eval.py --details    # 再列出每一条判错的回答和程序给出的理由
    $ python checks/grounding_eval.py --holdout    # 留出集：如实的回答被误标多少、不如实的回答抓到多少

标注（expected）是人按规则写的：这份回答应当通过（draft）、资料不足（missing）、需要复核（needs_review）
还是被拒绝（rejected）。“被标出”指 needs_review 或 rejected。不联网，不需要密钥。
标注集（grounding_cases.json）是写检查的人边写规则边用的；资料除了发布版，还有 grounding_documents.json 里的
酒店、健身房、快递三个领域。留出集（grounding_holdout.json）是另外两个领域、由没看过规则的人写的，
规则定下来以后只量过一次，没有照着它改规则。
"""
import contextlib
import functools
import io
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from unittest import mock

from kit_helpers import SHIPPED_DOCUMENTS, parse_tool_options, run_tool

import retrieval_qa

CASES = Path(__file__).resolve().parent / "grounding_cases.json"
DOCUMENT_SETS = Path(__file__).resolve().parent / "grounding_documents.json"   # 发布版以外的资料（另外几个领域）
HOLDOUT = Path(__file__).resolve().parent / "grounding_holdout.json"
VERDICTS = ["draft", "missing", "needs_review", "rejected"]
FLAGGED = {"needs_review", "rejected"}
FAITHFUL = {"faithful_copy", "faithful_paraphrase", "faithful_format", "faithful_two_chunks", "polite_closing"}   # 如实的回答


def load_cases():
    return json.loads(CASES.read_text(encoding="utf-8"))


def documents_for(case, directory, document_sets):
    """这条回答依据哪份资料：默认是发布版的副本；写了 "documents": "hotel" 的，用 document_sets 里那一份。"""
    name = case.get("documents")
    if name is None:
        return SHIPPED_DOCUMENTS
    path = Path(directory) / f"{name}.json"
    if not path.exists():
        path.write_text(json.dumps(document_sets[name], ensure_ascii=False), encoding="utf-8")
    return path


def load_holdout():
    """留出集：返回 (回答的列表, {领域名: 资料})。每条回答记下它属于哪个领域。"""
    data = json.loads(HOLDOUT.read_text(encoding="utf-8"))
    cases = [dict(case, documents=domain["name"]) for domain in data["domains"] for case in domain["cases"]]
    return cases, {domain["name"]: domain["documents"] for domain in data["domains"]}


def run_case(case, directory, document_sets):
    """真的走一遍 --check-draft（在进程内运行，省去启动子进程的时间）。返回输出的 JSON 对象。"""
    answer = Path(directory) / "answer.json"
    answer.write_text(json.dumps(case["answer"], ensure_ascii=False), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main([case["question"], "--check-draft", str(answer), "--documents",
                           str(documents_for(case, directory, document_sets))])
    return json.loads(out.getvalue())


def evaluate(cases=None, document_sets=None):
    """返回 [(case, 实际的 status, problems)]。默认量标注集。"""
    if cases is None:
        cases, document_sets = load_cases(), json.loads(DOCUMENT_SETS.read_text(encoding="utf-8"))
    results = []
    # 同一份资料文件每条回答都要读一遍；读出来的内容每次都一样，所以记住它（资料的警告反正不看），量得快一倍
    remembered = functools.lru_cache(maxsize=None)(retrieval_qa.load_documents)
    with tempfile.TemporaryDirectory() as directory, mock.patch.object(retrieval_qa, "load_documents", remembered):
        for case in cases:
            output = run_case(case, directory, document_sets)
            results.append((case, output["status"], output.get("problems", [])))
    return results


def catch_rate(results, kinds):
    chosen = [actual in FLAGGED for case, actual, _ in results if case["kind"] in kinds]
    return sum(chosen), len(chosen)


def report(results, details=False):
    lines = ["混淆矩阵（行：标注，列：程序的判定）", "标注".ljust(14) + "".join(v.rjust(14) for v in VERDICTS)]
    matrix = Counter((case["expected"], actual) for case, actual, _ in results)
    for expected in VERDICTS:
        lines.append(expected.ljust(16) + "".join(str(matrix[expected, actual]).rjust(14) for actual in VERDICTS))
    truth = [(case["expected"] in FLAGGED, actual in FLAGGED) for case, actual, _ in results]
    true_positive = sum(1 for should, did in truth if should and did)
    flagged = sum(1 for _, did in truth if did)
    should_flag = sum(1 for should, _ in truth if should)
    lines += ["", f"“需要复核或拒绝”的精确率：{true_positive}/{flagged} = {true_positive / flagged:.0%}",
              f"“需要复核或拒绝”的召回率：{true_positive}/{should_flag} = {true_positive / should_flag:.0%}", "",
              "各类回答被标出的比例："]
    by_kind = defaultdict(list)
    for case, actual, _ in results:
        by_kind[case["kind"]].append(actual in FLAGGED)
    for kind, marks in by_kind.items():
        lines.append(f"  {kind:<20} {sum(marks)}/{len(marks)}")
    wrong = [(case, actual, problems) for case, actual, problems in results if actual != case["expected"]]
    lines += ["", f"与标注不一致：{len(wrong)} 条（共 {len(results)} 条）"]
    if details:
        for case, actual, problems in wrong:
            lines.append(f"  [{case['kind']}] 标注 {case['expected']}，判定 {actual}：{case['answer']['draft']}")
            lines.extend(f"      {problem}" for problem in problems)
            lines.append(f"      标注理由：{case['why']}")
    return "\n".join(lines)


def holdout_figures(results):
    """留出集的三个数：(如实的回答被标出, 如实的回答总数)、(不如实的被标出, 总数)、(该拒绝的被拒绝, 总数)。"""
    faithful = [actual in FLAGGED for case, actual, _ in results if case["expected"] == "draft"]
    subtle = [actual in FLAGGED for case, actual, _ in results if case["expected"] == "needs_review"]
    refused = [actual == "rejected" for case, actual, _ in results if case["expected"] == "rejected"]
    return (sum(faithful), len(faithful)), (sum(subtle), len(subtle)), (sum(refused), len(refused))


def holdout_report(results, details=False):
    (false_alarms, faithful), (caught, subtle), (refused, should_refuse) = holdout_figures(results)
    lines = [f"如实的回答被误标：{false_alarms}/{faithful} = {false_alarms / faithful:.1%}",
             f"不如实的回答被标出：{caught}/{subtle} = {caught / subtle:.1%}",
             f"该拒绝的（正文里的越界编号、没有内容）被拒绝：{refused}/{should_refuse}", "", "各类："]
    by_kind = defaultdict(list)
    for case, actual, _ in results:
        by_kind[case["kind"]].append(actual in FLAGGED)
    lines += [f"  {kind:<20} 标出 {sum(marks)}/{len(marks)}" for kind, marks in by_kind.items()]
    if details:
        for case, actual, problems in results:
            if (actual in FLAGGED) != (case["expected"] in FLAGGED):
                lines.append(f"  [{case['kind']}] 标注 {case['expected']}，判定 {actual}：{case['answer']['draft']}")
                lines.extend(f"      {problem}" for problem in problems)
    return "\n".join(lines)


def main(argv):
    options = parse_tool_options(argv, "用法：python checks/grounding_eval.py [--details] [--holdout]", __doc__,
                                 flags=("--details", "--holdout"))
    if options["--holdout"]:
        cases, documents = load_holdout()
        print(f"留出集：checks/{HOLDOUT.name}（{len(documents)} 个领域，{len(cases)} 份回答）")
        print(holdout_report(evaluate(cases, documents), details=options["--details"]))
        return 0
    # 标注是照着发布版资料写的，所以总在它的副本上量：量的是检查本身，和你改没改资料无关
    print(f"资料：checks/{SHIPPED_DOCUMENTS.name}（发布版的副本）和 checks/{DOCUMENT_SETS.name}；标注：checks/{CASES.name}")
    print(report(evaluate(), details=options["--details"]))
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
