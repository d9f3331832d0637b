"""验收记录：把第 03 课的四个样例问题各跑一遍，写成“问题｜命中编号｜是否调用模型｜期望事实｜实际草稿｜是否通过”表格。

    $ python checks/acceptance.py                          # 只检索（离线）：模型那两列留空
    $ python checks/acceptance.py --with-model             # 真的请模型（DeepSeek 密钥或 LOCAL_MODEL_URL 的本机模型）
    $ python checks/acceptance.py --out 验收记录.csv       # 写成 CSV（Excel 能直接打开）；其他文件名写 Markdown

“是否通过”按规则算：命中的编号和期望一致；该调用模型时回答里有期望的事实、引用都在命中的片段里、状态是 draft；
不该调用模型时确实没有调用。密钥只用来请求，从不写进表格或文件。
"""
import contextlib
import csv
import io
import json
import sys

import kit_helpers  # noqa: F401  （把套件根目录放进 sys.path）

import retrieval_qa

COLUMNS = ["问题", "命中编号", "是否调用模型", "期望事实", "实际草稿", "是否通过"]
# 期望：命中哪些片段、要不要调用模型、草稿里必须出现的说法（每组里出现一个就行）
CASES = [
    {"question": "试用几天？", "hits": ["D01#1"], "call": True, "fact": "试用期 7 天，引用 D01#1",
     "must": [["7 天", "7天", "七天"]]},
    {"question": "部署后会自动发送吗？", "hits": ["D01#2", "D02#1"], "call": True,
     "fact": "不会自动发送，需人工检查后发出，引用 D01#2", "must": [["不会", "不", "从不"], ["发送", "发出"]]},
    {"question": "价格是多少？", "hits": [], "call": False, "fact": "零命中，不调用模型，不出现价格", "must": []},
    {"question": "能免费用多久？", "hits": [], "call": False, "fact": "零命中（已知漏检，练习一修复）", "must": []},
]


def run_case(case, with_model):
    """在进程内运行 retrieval_qa.py，返回它输出的 JSON 对象；提示和进度不打印。"""
    args = [case["question"]] if with_model else ["--retrieve-only", case["question"]]
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main(args)
    return json.loads(output.getvalue()) if output.getvalue() else None


def judge(case, result, with_model):
    """返回表格的一行。"""
    if result is None:
        return [case["question"], "（出错）", "", case["fact"], "", "否：程序没有输出结果"]
    hits = [hit["id"] for hit in result["hits"]]
    row = [case["question"], "、".join(hits) or "无", "是" if result["model_called"] else "否", case["fact"]]
    reasons = [] if sorted(hits) == sorted(case["hits"]) else [f"命中应为 {'、'.join(case['hits']) or '无'}"]
    if not case["call"]:
        if result["model_called"]:
            reasons.append("不该调用模型")
        return row + ["（未调用模型）", "否：" + "；".join(reasons) if reasons else "是"]
    if not with_model:
        return row + ["（未运行，加 --with-model）", "否：" + "；".join(reasons) if reasons else "检索通过，草稿待测"]
    draft = result.get("draft") or ""
    if result["status"] != "draft":
        reasons.append(f"状态是 {result['status']}")
    reasons += [f"草稿里没有“{group[0]}”" for group in case["must"] if not any(word in draft for word in group)]
    if not set(result.get("sources", [])) <= set(hits):
        reasons.append("引用了没命中的片段")
    return row + [draft or "（无）", "否：" + "；".join(reasons) if reasons else "是"]


def markdown(rows):
    cell = lambda text: str(text).replace("|", "\\|").replace("\n", " ")   # noqa: E731
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]) + "\n"


def main(argv):
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="replace")
    with_model, out, pending = False, None, list(argv)
    while pending:
        arg = pending.pop(0)
        if arg == "--with-model":
            with_model = True
        elif arg == "--out" and pending:
            out = pending.pop(0)
        else:
            print(__doc__)
            return 0 if arg in ("-h", "--help") else 2
    rows = [judge(case, run_case(case, with_model), with_model) for case in CASES]
    if out is None:
        sys.stdout.write(markdown(rows))
    elif out.lower().endswith(".csv"):
        with open(out, "w", encoding="utf-8-sig", newline="") as handle:   # 带 BOM，Windows 的 Excel 才认得中文
            csv.writer(handle).writerows([COLUMNS] + rows)
        print(f"已写入 {out}")
    else:
        with open(out, "w", encoding="utf-8") as handle:
            handle.write(markdown(rows))
        print(f"已写入 {out}")
    return 0 if all(row[-1] in ("是", "检索通过，草稿待测") for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
