"""全班一起看：用老师手里这份可信的代码和检查，给每个学生的套件副本各出一行。

    $ python checks/grade.py 作业/张三 作业/李四 …          # Markdown 表格写到 stdout
    $ python checks/grade.py 作业/* --out 成绩.csv           # 写成 CSV（带 BOM，Excel 能直接打开）

每一行：资料文件能不能读、做完了哪些练习（练习二、三、五做完要改回去：还没改回的标“未改回”；学生自己运行过
exercise.py 的，它的 checks/.exercise-progress.json 记着见过哪些做完，改回去了的标“已改回”）、
关键词检索在 checks/eval_questions.json 上的 recall@3 和精确率、
离线验收记录通过了几行、哪些程序文件和老师的不同（按内容的 SHA-256 比，换行符 CRLF/LF 不算不同）。
学生副本里的代码一行也不运行：读的只是它的资料文件、trick.json，以及程序文件的内容。
不联网，不需要密钥，不修改学生的文件。正常出表时退出码为 0，用法不对为 2。
"""
import contextlib
import csv
import hashlib
import io
import json
import sys
from pathlib import Path

from kit_helpers import CHECKS_DIR, ROOT, parse_tool_options, run_tool

import acceptance
import evaluate
import exercise
import retrieval_qa
from reply_assistant import KitError
from model_reply_assistant import os_reason

USAGE = "用法：python checks/grade.py 学生的套件文件夹 … [--out FILE]"
COLUMNS = ["副本", "资料文件", "做完的练习", "检索 recall@3", "检索精确率", "验收（离线）", "改过的程序文件（和老师的比）"]
PROGRAM_FILES = ["reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py"]   # 学生不该改的程序


def fingerprint(path):
    """文件内容的 SHA-256；先把 CRLF 换成 LF，Windows 上克隆的副本不会因为换行符被算作“改过”。"""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def changed_programs(folder):
    """学生副本里和老师的不同的程序文件：套件的三个脚本和 checks/ 里的 .py；缺了的也算。"""
    names = PROGRAM_FILES + [f"checks/{path.name}" for path in sorted(CHECKS_DIR.glob("*.py"))]
    changed = []
    for name in names:
        theirs = folder / name
        if name.startswith("checks/") and not (folder / "checks").is_dir():
            continue   # 学生只交了套件本身，没带 checks/：不算改动
        if not theirs.is_file():
            changed.append(f"{name}（缺）")
        elif fingerprint(theirs) != fingerprint(ROOT / name):
            changed.append(name)
    return changed


def grade(folder):
    """一个学生副本的一行。"""
    documents_path = folder / "retrieval_documents.json"
    row = [str(folder)]
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            documents = retrieval_qa.load_documents(str(documents_path))
    except KitError as error:
        reason = str(error).removeprefix("错误：")
        return row + [f"读不了：{reason}", "—", "—", "—", "—", "、".join(changed_programs(folder)) or "无"]
    remembered = exercise.remembered_done(True, folder / "checks" / exercise.PROGRESS.name)   # 学生自己的进度（只读）
    done = []
    for number in exercise.EXERCISES:
        state = exercise.judge(number, documents, documents_path, remembered)[0]
        if state == "done":
            done.append(f"{number}（未改回）" if number in exercise.RESTORE else str(number))
        elif state == "restored":
            done.append(f"{number}（已改回）")
    questions = json.loads(evaluate.QUESTIONS.read_text(encoding="utf-8"))
    metrics, _ = evaluate.measure(questions, lambda q: [hit["id"] for hit in retrieval_qa.retrieve(q, documents)])
    rows = [acceptance.judge(case, *acceptance.run_case(case["question"], False, str(documents_path)), False)
            for case in acceptance.CASES]
    passed = sum(1 for accepted in rows if not accepted[-1].startswith("否"))
    return row + ["能读", "、".join(done) or "无", evaluate.ratio(metrics["recall"]), evaluate.ratio(metrics["precision"]),
                  f"{passed}/{len(rows)} 行", "、".join(changed_programs(folder)) or "无"]   # 写成“3/4 行”：Excel 不会把它当日期


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, values=("--out",), positionals=1000)
    if not options["args"]:
        print(f"错误：至少要给一个学生的套件文件夹。{USAGE}", file=sys.stderr)
        return 2
    folders = list(dict.fromkeys(Path(arg).resolve() for arg in options["args"]))   # 同一个文件夹写了两遍只算一次
    missing = [str(folder) for folder in folders if not folder.is_dir()]
    if missing:
        print(f"错误：这些不是文件夹：{'、'.join(missing)}。{USAGE}", file=sys.stderr)
        return 2
    not_kits = [str(folder) for folder in folders
                if not (folder / "retrieval_documents.json").exists() and not (folder / "retrieval_qa.py").exists()]
    if not_kits:
        print(f"错误：这些文件夹里既没有 retrieval_documents.json 也没有 retrieval_qa.py，不像学生的套件："
              f"{'、'.join(not_kits)}。是不是要写成 作业文件夹/*？", file=sys.stderr)
        return 2
    rows = [grade(folder) for folder in folders]
    out = options["--out"]
    if out is None:
        cell = lambda text: str(text).replace("|", "｜")   # noqa: E731
        print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
        for row in rows:
            print("| " + " | ".join(cell(value) for value in row) + " |")
        return 0
    try:
        with open(out, "w", encoding="utf-8-sig", newline="") as handle:   # 带 BOM，Windows 的 Excel 才认得中文
            csv.writer(handle).writerows([COLUMNS] + rows)
    except OSError as error:
        reason = "它所在的文件夹不存在" if isinstance(error, FileNotFoundError) else os_reason(error)
        print(f"错误：写不了 {out}（{reason}）。", file=sys.stderr)
        return 2
    print(f"已写入 {out}：{len(rows)} 个副本。")
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))
