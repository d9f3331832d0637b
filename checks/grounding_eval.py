"""出处核对的实测：把 grounding_cases.json 里每份人工标注的回答交给 retrieval_qa.py --check-draft，和标注对比。

    $ python checks/grounding_eval.py              # 打印混淆矩阵、各类的检出率、精确率和召回率
    $ python checks/grounding_eval.py --details    # 再列出每一条判错的回答和程序给出的理由

标注（expected）是人按规则写的：这份回答应当通过（draft）、资料不足（missing）、需要复核（needs_review）
还是被拒绝（rejected）。“被标出”指 needs_review 或 rejected。不联网，不需要密钥。
"""
import contextlib
import io
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from kit_helpers import SHIPPED_DOCUMENTS, parse_tool_options, run_tool

import retrieval_qa

CASES = Path(__file__).resolve().parent / "grounding_cases.json"
VERDICTS = ["draft", "missing", "needs_review", "rejected"]
FLAGGED = {"needs_review", "rejected"}


def load_cases():
    return json.loads(CASES.read_text(encoding="utf-8"))


def run_case(case, directory):
    """真的走一遍 --check-draft（在进程内运行，省去启动子进程的时间）。返回输出的 JSON 对象。"""
    answer = Path(directory) / "answer.json"
    answer.write_text(json.dumps(case["answer"], ensure_ascii=False), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main([case["question"], "--check-draft", str(answer), "--documents", str(SHIPPED_DOCUMENTS)])
    return json.loads(out.getvalue())


def evaluate(cases=None):
    """返回 [(case, 实际的 status, problems)]。"""
    results = []
    with tempfile.TemporaryDirectory() as directory:
        for case in cases or load_cases():
            output = run_case(case, directory)
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


def main(argv):
    options = parse_tool_options(argv, "用法：python checks/grounding_eval.py [--details]", __doc__, flags=("--details",))
    # 标注是照着发布版资料写的，所以总在它的副本上量：量的是检查本身，和你改没改资料无关
    print(f"资料：checks/{SHIPPED_DOCUMENTS.name}（发布版的副本）；标注：checks/{CASES.name}")
    print(report(evaluate(), details=options["--details"]))
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
