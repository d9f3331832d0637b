"""练习自查：看看你这份套件里，某个练习做完了没有、还差什么、做完要不要改回去。

    $ python checks/exercise.py        # 列出全部练习
    $ python checks/exercise.py 1      # 检查练习 1

只读文件，从不修改；不联网，不需要密钥。做完了退出码为 0，还没做完为 1，用法不对为 2。
"""
import contextlib
import io
import json
import sys

from kit_helpers import ROOT

import retrieval_qa
from reply_assistant import KitError, instruction_like

TRICK = ROOT / "trick.json"   # 练习 4 的草稿文件
EXERCISES = {
    1: "第 03 课 练习一：给 D01#1 加关键词“免费用多久”，让“能免费用多久？”命中它",
    2: "第 03 课 练习二：把 D01#1 正文里的 7 天改成 14 天，看回答跟着变（做完改回 7 天）",
    3: "第 03 课 练习三：删掉 D01#1，看“试用几天？”零命中、不请求模型（做完恢复）",
    4: "第 04 课 练习：写一份错误的草稿 trick.json，让“试用几天？”的 --check-draft 仍判为 draft",
    5: "第 05 课 练习：在资料里加一条藏着指令的记录，看警告和复核（做完删掉）",
}


def load():
    """读取学生的资料文件；读不了就返回 (None, 报错)。警告不打印，这里只关心练习。"""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return retrieval_qa.load_documents(), None
    except KitError as error:
        return None, str(error)


def hit_ids(question, documents):
    return [hit["id"] for hit in retrieval_qa.retrieve(question, documents)]


def trial(documents):
    return next((record for record in documents if record["id"] == "D01#1"), None)


SHIPPED_IDS = {"D01#1", "D01#2", "D02#1", "D03#1", "D04#1"}   # 随套件发布的片段


def exercise_1(documents):
    if trial(documents) is None:
        return False, ["资料里没有 D01#1（是不是还停在练习三，删掉以后没有恢复？）。"], False
    if "D01#1" not in hit_ids("能免费用多久？", documents):
        return False, [f"“能免费用多久？”还没有命中 D01#1。它现在的关键词是：{'、'.join(trial(documents)['keywords'])}。"], False
    return True, ["“能免费用多久？”现在命中 D01#1。关键词只是路由，不是事实：回答仍只能依据正文。"], False


def exercise_2(documents):
    record = trial(documents)
    if record is None:
        return False, ["资料里没有 D01#1（是不是还停在练习三？）。"], False
    days = retrieval_qa.numbers_in(record["text"])
    if "14" not in days or "7" in days:
        return False, [f"D01#1 的正文里还不是 14 天（如果你已经做完、又改回了 7 天，那就对了）：{record['text'][:30]}…"], False
    sent = [hit for hit in retrieval_qa.retrieve("试用几天？", documents) if hit["id"] == "D01#1"]
    if not sent:
        return False, ["正文改成了 14 天，可“试用几天？”现在没有命中 D01#1：是不是把关键词也改了？"], False
    return True, [f"“试用几天？”会发送 D01#1：{sent[0]['text']}",
                  "有密钥（或本机模型）就运行 python retrieval_qa.py 试用几天？，回答应当说 14 天、引用 D01#1。"], True


def exercise_3(documents):
    if trial(documents) is not None:
        return False, ["D01#1 还在资料里（如果你已经做完、又恢复了备份，那就对了）。先备份，再删掉整条记录（注意逗号）。"], False
    hits = hit_ids("试用几天？", documents)
    if hits:
        return False, [f"D01#1 删掉了，但“试用几天？”还命中 {'、'.join(hits)}。"], False
    return True, ["“试用几天？”零命中：程序不会读取密钥，也不会请求模型。"], True


def exercise_4(documents):
    if not TRICK.is_file():
        return False, [f"没有找到 {TRICK.name}。把你的草稿存成套件文件夹里的 {TRICK.name}，格式见第 04 课的练习。"], False
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main(["试用几天？", "--check-draft", str(TRICK)])
    result = json.loads(output.getvalue())
    if result["status"] == "no_hits":
        return False, ["“试用几天？”现在零命中，检查根本不会进行（是不是还停在练习三？）。"], False
    if result["status"] != "draft":
        reason = (result["problems"] or [result["note"]])[0]
        return False, [f"检查没被骗过：结果是 {result['status']}。程序说：{reason}"], False
    try:
        why = json.loads(TRICK.read_text(encoding="utf-8-sig")).get("why", "")
    except (ValueError, AttributeError):
        why = ""
    if not isinstance(why, str) or not why.strip():
        return False, ["检查判它为 draft。可程序分不出一份草稿是“骗过了检查”还是“本来就对”：请在 trick.json 里加一个 "
                       "\"why\" 字段，写明它错在哪里、属于第 04 课最后一节的哪一种盲区。"], False
    return True, [f"检查判它为 draft，而你说它错在：{why.strip()[:60]}", "对照第 04 课最后一节，这正是出处核对证明不了的地方。"], False


def exercise_5(documents):
    flagged = [record["id"] for record in documents if instruction_like(record["title"] + " " + record["text"])]
    added = [record["id"] for record in documents if record["id"] not in SHIPPED_IDS]
    if flagged:
        return True, [f"{'、'.join(flagged)} 会触发警告；引用它的草稿一律要人工复核（试试第 05 课的 obey-cite.json）。"], True
    if added:
        return True, [f"你加了 {'、'.join(added)}，清单没有认出里面的指令——你找到了一种能绕过第一道筛子的说法。"
                      "想一想：这时是哪一道防线在起作用？"], True
    return False, ["资料里还没有你新加的记录（如果你已经做完、又删掉了，那就对了）。照第 05 课第一节，"
                   "加一条正文里藏着指令的记录。"], False


CHECKS = {1: exercise_1, 2: exercise_2, 3: exercise_3, 4: exercise_4, 5: exercise_5}


def main(argv):
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="replace")
    if not argv:
        print("练习（python checks/exercise.py 编号）：")
        for number, text in EXERCISES.items():
            print(f"  {number}  {text}")
        return 0
    if argv in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(argv) != 1 or not argv[0].isdigit() or int(argv[0]) not in EXERCISES:
        print(f"错误：练习编号应当是 1–{len(EXERCISES)} 之一，实际是 {' '.join(argv)}。不带参数运行可以列出全部练习。",
              file=sys.stderr)
        return 2
    number = int(argv[0])
    print(f"练习 {number}：{EXERCISES[number]}")
    documents, error = load()
    if error:
        print(f"还没完成：资料文件现在读不了。{error}")
        return 1
    done, lines, restore = CHECKS[number](documents)
    print(("已完成：" if done else "还没完成：") + lines[0], *lines[1:], sep="\n")
    if done and restore:
        print("提醒：这个练习做完要改回去（用你的备份，或重新下载 retrieval_documents.json），免得影响后面的练习和检查。")
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
