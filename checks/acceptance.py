"""验收记录：把四个样例问题（第 03 课里问过的）各跑一遍，写成“问题｜命中编号｜是否调用模型｜期望事实｜实际草稿｜是否通过”表格。

    $ python3 checks/acceptance.py                          # 只检索（离线）：要模型回答的两行写“草稿待测”
    $ python3 checks/acceptance.py --with-model             # 真的请模型（DeepSeek 密钥或 LOCAL_MODEL_URL 的本机模型）
    $ python3 checks/acceptance.py --out 验收记录.csv       # 写成 CSV（Excel 能直接打开）；其他文件名写 Markdown

“是否通过”按规则算：应当命中的片段都命中了（零命中的问题确实零命中）；要回答的问题，状态是 draft（通过出处核对）、
草稿里有期望的说法、没有和它相反的说法、引用都在命中的片段里；零命中的问题没有调用模型。
“能免费用多久？”是已知漏检：零命中算通过（记为漏检）；做了练习一、命中 D01#1 以后，就按“试用几天？”的标准验收。
没有设置密钥时只在开头问一次（不回显）。密钥只用来请求，从不写进表格或文件。全部通过时退出码为 0，有没通过的为 1，
资料读不了、用法不对为 2；--with-model 拿不到密钥（没设置、终端藏不住输入）为 3；--out 写不出去为 5。
"""
import contextlib
import io
import json
import os
import re
import sys

from kit_helpers import parse_tool_options, run_tool, write_out

import retrieval_qa
from model_reply_assistant import KitError
from model_reply_assistant import one_line

COLUMNS = ["问题", "命中编号", "是否调用模型", "期望事实", "实际草稿", "是否通过"]
TRIAL = {"required": ["D01#1"], "fact": "试用期 7 天，引用 D01#1",
         "must": [["7 天", "7天", "七天"]], "must_not": [r"(?<![0-9１-９])(?:[1-68-9]|[1-9]\d+) ?天"]}
# required：必须命中的片段（None 表示必须零命中）；must：每组至少出现一个；must_not：出现就不通过（正则）
CASES = [
    dict(TRIAL, question="试用几天？"),
    {"question": "部署后会自动发送吗？", "required": ["D01#2"], "fact": "不会自动发送，需人工检查后发出，引用 D01#2",
     "must": [["不会自动", "从不自动", "不自动"], ["人工", "客服人员", "人来"]], "must_not": [r"(?<!不)会自动发"]},
    {"question": "价格是多少？", "required": None, "fact": "零命中，不调用模型，不出现价格", "must": [], "must_not": []},
    {"question": "能免费用多久？", "required": None, "fact": "零命中记为已知漏检；做了练习一则应命中 D01#1、回答 7 天",
     "must": [], "must_not": [], "fixed_by_exercise": TRIAL},
]


def run_case(question, with_model, documents=None):
    """在进程内运行 retrieval_qa.py，返回 (输出的 JSON 对象或 None, stderr 的最后一行)。"""
    args = [question] if with_model else ["--retrieve-only", question]
    args += ["--documents", documents] if documents else []
    output, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(errors):
        retrieval_qa.main(args)
    lines = errors.getvalue().strip().splitlines()
    return (json.loads(output.getvalue()) if output.getvalue() else None), (lines[-1] if lines else "")


def judge(case, result, error, with_model):
    """按规则判定一行。"""
    if result is None:
        return [case["question"], "（出错）", "否", case["fact"], "", f"否：{error or '程序没有输出结果'}"]
    hits = [hit["id"] for hit in result["hits"]]
    if case.get("fixed_by_exercise") and "D01#1" in hits:   # 练习一做完了：按试用问题的标准验收
        case = dict(case["fixed_by_exercise"], question=case["question"])
    row = [case["question"], "、".join(hits) or "无", "是" if result["model_called"] else "否", case["fact"]]
    if case["required"] is None:
        reasons = [f"应当零命中，却命中了 {'、'.join(hits)}"] if hits else []
        reasons += ["不该调用模型"] if result["model_called"] else []
        return row + ["（未调用模型）", "否：" + "；".join(reasons) if reasons else "是"]
    missing = [i for i in case["required"] if i not in hits]
    reasons = [f"没有命中 {'、'.join(missing)}"] if missing else []
    # 不调用模型也能先看一眼：要发送的片段里有没有期望的事实？片段里写的是 14 天，模型就不该答 7 天
    sent = " ".join(hit["text"] for hit in result["hits"] if hit["id"] in case["required"])
    reasons += [f"要发送的片段里没有“{group[0]}”（{'、'.join(case['required'])} 的正文改过？）"
                for group in case["must"] if not missing and not any(word in sent for word in group)]
    if not with_model:
        return row + ["（未运行，加 --with-model）", "否：" + "；".join(reasons) if reasons else "检索通过，草稿待测"]
    draft = result.get("draft") or ""
    if result["status"] != "draft":
        detail = f"（{one_line(result['problems'][0])}）" if result.get("problems") else ""   # 整句：截在半句上会读反
        reasons.append(f"状态是 {result['status']}{detail}")
    reasons += [f"草稿里没有“{group[0]}”" for group in case["must"] if not any(word in draft for word in group)]
    reasons += [f"草稿里有“{found.group()}”" for pattern in case["must_not"] for found in [re.search(pattern, draft)]
                if found]
    if not set(result.get("sources", [])) <= set(hits):
        reasons.append("引用了没命中的片段")
    return row + [draft or "（无）", "否：" + "；".join(reasons) if reasons else "是"]


def ask_key_once():
    """要请 DeepSeek 又没有设置密钥时，在开头问一次，放进本进程的环境变量（不写文件）；问不了就停下。"""
    from model_reply_assistant import model_target, read_api_key
    if model_target()["official"] and not os.environ.get("DEEPSEEK_API_KEY", "").strip():
        os.environ["DEEPSEEK_API_KEY"] = read_api_key()


def markdown(rows):
    cell = lambda text: str(text).replace("|", "\\|").replace("\n", " ")   # noqa: E731
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]) + "\n"


def main(argv):
    usage = "用法：python3 checks/acceptance.py [--with-model] [--out FILE] [--documents PATH]"
    options = parse_tool_options(argv, usage, __doc__, flags=("--with-model",), values=("--out", "--documents"))
    with_model, out = options["--with-model"], options["--out"]
    try:   # 资料读不了：和 evaluate.py 一样先说一句、退出码 2，不在四行里各重复一遍；也不必先问密钥
        retrieval_qa.load_documents(options["--documents"] or retrieval_qa.DOCUMENTS_PATH)
    except KitError as error:
        print(error, file=sys.stderr)
        return 2
    try:
        if with_model:
            ask_key_once()
    except KitError as error:
        print(error, file=sys.stderr)
        return error.exit_code
    rows = [judge(case, *run_case(case["question"], with_model, options["--documents"]), with_model) for case in CASES]
    failed = sum(1 for row in rows if row[-1].startswith("否"))
    if out is None:
        sys.stdout.write(markdown(rows))
        return 1 if failed else 0
    lost = write_out(out, [COLUMNS] + rows, markdown(rows))
    if lost:   # 写不出去：退出码 5
        return lost
    pending = sum(1 for row in rows if "待测" in row[-1])   # 只检索时要模型回答的几行：没判，不能算通过
    print(f"已写入 {out}：{len(rows)} 行，{len(rows) - failed - pending} 行通过，{pending} 行草稿待测，{failed} 行没通过。")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
