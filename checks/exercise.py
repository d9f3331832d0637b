"""练习自查：看看你这份套件里，某个练习做完了没有、还差什么、做完要不要改回去。

    $ python3 checks/exercise.py                          # 列出全部练习
    $ python3 checks/exercise.py 1                        # 检查练习 1
    $ python3 checks/exercise.py all                      # 一张表判完全部练习
    $ python3 checks/exercise.py all --documents 学生.json  # 老师用：判一份学生的资料文件（trick.json 在它旁边找；是链接的不判）

只读你的文件，从不修改（存档是另写的文件）；不联网，不需要密钥。做完了退出码为 0，还没做完为 1，用法不对为 2。
练习二、三、五做完要改回去。判你自己的套件时，工具会在 checks/.exercise-progress.json 里记下“见过做完的样子”，
并把练习一、二、三、五做完时的资料原样存进 checks/.exercise-done/（进度文件不进 git，存档要交）：改回去以后这里显示“做完并已改回”
（资料又改成别的样子时显示“之前做完过”），老师的 grade.py 也能用可信的检查重判那份存档，不必只凭你自己的记录。
老师用 --documents 判学生副本里的资料时也一样：进度文件不认，只用那个副本 checks/.exercise-done/ 里的存档重判。
"""
import bisect
import contextlib
import functools
import io
import json
import os
import re
import stat
import sys
import urllib.parse
from pathlib import Path

from kit_helpers import CHECKS_DIR, ROOT, SHIPPED_DOCUMENTS, borrowed, parse_tool_options, run_tool

import retrieval_qa
from model_reply_assistant import JsonProblem, Many, decode_student_file, describe_os_error, one_line, parse_json, read_head, shape_problem, visible
from model_reply_assistant import KitError, closest   # closest：和命令行选项、资料的字段一样猜拼错的名字
from retrieval_qa import instruction_like

USAGE = "用法：python3 checks/exercise.py [编号 | all] [--documents PATH]"
DOCUMENTS_NAME = "retrieval_documents.json"
PROGRESS = CHECKS_DIR / ".exercise-progress.json"   # 记下见过做完的练习；只记套件自己的资料文件
DONE_FOLDER = ".exercise-done"   # checks/ 下存做完时的资料的文件夹：练习二、三、五各一份
EXERCISES = {
    1: "第 03 课 练习一：给 D01#1 加关键词“免费用多久”，让“能免费用多久？”命中它",
    2: "第 03 课 练习二：把 D01#1 正文里的 7 天改成 14 天，看回答跟着变（做完改回 7 天）",
    3: "第 03 课 练习三：删掉 D01#1，看“试用几天？”零命中、不请求模型（做完恢复）",
    4: "第 04 课 练习：写一份错误的草稿 trick.json，让“试用几天？”的 --check-draft 仍判为 draft",
    5: "第 05 课 练习：在资料里加一条藏着指令的记录，看警告和复核（做完删掉）",
    6: "第 07 课 练习一：在 pairs.json 里写两对自己找的搜索结果（一对同一篇、一对不同的来源），看去重判得对不对",
    7: "第 07 课 练习二：在 domains.json 的 deny 里加一个域名，让“请问记得笔记的免费试用期是多久？”的来源变了",
}
WEB_QUESTION = "请问记得笔记的免费试用期是多久？"   # 第 07 课练习二问的问题
RESTORE = {2: "把 D01#1 正文里的 14 天改回 7 天", 3: "用你做的备份把 D01#1 恢复回来",
           5: "删掉你加的那条藏着指令的记录"}   # 做完要改回去的练习，各自怎么改回
STUDENT_FILE_LIMIT = 64 * 1024   # 字节：练习自己写的 JSON（trick.json、pairs.json）只有几行，再大多半是放错了文件
SAVED = (1, 2, 3, 5)   # 改资料的练习：做完时把资料存一份，以后资料改回去或再改，仍能核对做过
OWN_FILES = {4: "trick.json", 6: "pairs.json", 7: "domains.json"}   # 练习自己写的文件，在资料文件旁边找


def load(path):
    """读取资料文件；读不了就返回 (None, 报错)。"""
    try:
        return retrieval_qa.load_documents(str(path)), None
    except KitError as error:
        return None, str(error)


def hit_ids(question, documents):
    return [hit["id"] for hit in retrieval_qa.retrieve(question, documents)]


def trial(documents):
    return next((record for record in documents if record["id"] == "D01#1"), None)


def shipped():
    return json.loads(SHIPPED_DOCUMENTS.read_text(encoding="utf-8-sig"))


def missing_trial(documents):
    """资料里找不到 D01#1 时说明可能的原因：id 被改成了全角的样子，或者练习三删掉以后没有恢复。"""
    twin = next((record["id"] for record in documents if retrieval_qa.fold(record["id"]) == "d01#1"), None)
    if twin is not None:   # 说清差在哪里：不能一律说“改回半角的”，d01#1、"D01#1 " 本来就是半角
        import unicodedata
        bare = "".join(char for char in twin.strip() if unicodedata.category(char) != "Cf")   # Cf：零宽字符这类看不见的
        differences = [why for why, differs in (("首尾多了空格", twin != twin.strip()), ("夹着看不见的字符", bare != twin.strip()),
                                                ("有全角字符", unicodedata.normalize("NFKC", bare) != bare),
                                                ("大小写不同", unicodedata.normalize("NFKC", bare) != "D01#1")) if differs]
        shown = json.dumps(twin, ensure_ascii=False).encode("ascii", "backslashreplace").decode("ascii") if bare != twin.strip() \
            else json.dumps(twin, ensure_ascii=False)
        return f"资料里没有 D01#1，却有一条 id 是 {shown}：它只是看着像（{'、'.join(differences)}），请改成 D01#1。"
    return "资料里没有 D01#1（是不是还停在练习三，删掉以后没有恢复？）。"


def exercise_1(documents, path):
    record = trial(documents)
    if record is None:
        return False, [missing_trial(documents)]
    # 读资料时关于 D01#1 关键词的警告（有分隔符、只有一个字……）：retrieval_qa.py 会打印，这里也说，它往往就是原因
    problems = {keyword: retrieval_qa.keyword_problem(keyword) for keyword in record["keywords"]}
    warned = [f"读资料时的警告：D01#1 的关键词「{keyword}」{problem}。" for keyword, problem in problems.items() if problem]
    if "D01#1" not in hit_ids("能免费用多久？", documents):
        return False, [f"“能免费用多久？”还没有命中 D01#1。它现在的关键词是：{'、'.join(record['keywords'])}。", *warned]
    lines = ["“能免费用多久？”现在命中 D01#1。关键词只是路由，不是事实：回答仍只能依据正文。", *warned]
    questions = json.loads((CHECKS_DIR / "eval_questions.json").read_text(encoding="utf-8-sig"))
    before = shipped()
    too_broad = [q["question"] for q in questions if "D01#1" not in q["expected"]
                 and "D01#1" in hit_ids(q["question"], documents) and "D01#1" not in hit_ids(q["question"], before)]
    if too_broad:   # 关键词太宽：本不该找 D01#1 的问题也被带到它面前。点名是哪个新词带来的（命中时记下的 matched）
        new_words = set(record["keywords"]) - set(trial(before)["keywords"])
        culprits = dict.fromkeys(word for question in too_broad for hit in retrieval_qa.retrieve(question, documents)
                                 if hit["id"] == "D01#1" for word in hit["matched"] if word in new_words)
        shown = "、".join(f"“{question}”" for question in too_broad[:3]) + ("等" if len(too_broad) > 3 else "")
        which = "、".join(f"「{word}」" for word in culprits) or "新加的"
        lines.append(f"注意：新关键词{which}太宽了，{shown}本不该命中 D01#1，现在也命中了（见 checks/eval_questions.json）。"
                     "换一个更具体的词" + ("，比如“免费用多久”。" if "免费用多久" not in new_words else "。"))
    return True, lines


def exercise_2(documents, path):
    record = trial(documents)
    if record is None:
        return False, [missing_trial(documents)]
    days = retrieval_qa.numbers_in(record["text"])   # “14 天”“14天”“十四天”都认作 14
    if "14" not in days or "7" in days:
        return False, [f"D01#1 的正文里还不是 14 天：{record['text'][:30]}…"]
    sent = [hit for hit in retrieval_qa.retrieve("试用几天？", documents) if hit["id"] == "D01#1"]
    if not sent:
        return False, ["正文改成了 14 天，可“试用几天？”现在没有命中 D01#1：是不是把关键词也改了？"]
    return True, [f"“试用几天？”会发送 D01#1：{sent[0]['text']}",
                  "有密钥（或本机模型）就运行 python3 retrieval_qa.py 试用几天？，回答应当说 14 天、引用 D01#1。"]


def exercise_3(documents, path):
    if trial(documents) is not None:
        return False, ["D01#1 还在资料里。先备份，再删掉整条记录（注意逗号）。"]
    hits = hit_ids("试用几天？", documents)
    if hits:
        return False, [f"D01#1 删掉了，但“试用几天？”还命中 {'、'.join(hits)}。"]
    return True, ["“试用几天？”零命中：程序不会读取密钥，也不会请求模型。"]


def exercise_4(documents, path):
    trick = path.parent / "trick.json"   # 草稿放在资料文件旁边，也就是套件文件夹里
    if not trick.is_file():
        return False, [f"没有找到 {trick}。把你的草稿存成套件文件夹里的 trick.json，格式见第 04 课的练习。"]
    answer, problem = student_json(trick)   # 先看它是不是合法的 JSON：语法错误就是语法错误，不是“没骗过”
    if problem:
        return False, [problem]
    fields = answer if isinstance(answer, dict) else {}
    if "你的草稿" in str(fields.get("draft", "")) or "它错在哪里" in str(fields.get("why", "")):
        return False, ["trick.json 里还是课文给的占位文字（“……你的草稿……”“……它错在哪里……”）：换成你自己写的草稿和理由。"]
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(io.StringIO()):
        retrieval_qa.main(["试用几天？", "--check-draft", str(trick), "--documents", str(path)])
    result = json.loads(output.getvalue())
    if result["status"] == "no_hits":
        return False, ["“试用几天？”现在零命中，检查根本不会进行（是不是还停在练习三？）。"]
    if result["status"] != "draft":
        reason = (result["problems"] or [result["note"]])[0]
        return False, [f"检查没被骗过：结果是 {result['status']}。程序说：{reason}"]
    copied = shipped_copy(result["draft"])
    if copied:   # 课文、检查里的草稿（对的、演示盲区的、建班用的）：不是自己写的
        return False, [f"检查判它为 draft，可这份草稿照抄的是套件里 {copied} 的一份草稿：要自己写一份错了、又能骗过检查的草稿。"]
    sent = " ".join(hit["text"] for hit in result["hits"])
    facts = [part for part in re.split(r"[。！？!?\n]", result["draft"]) if retrieval_qa.plain(part)]
    if facts and all(retrieval_qa.plain(part) in retrieval_qa.plain(sent) for part in facts):   # 每句都照抄原文：本来就对
        return False, ["检查判它为 draft，可草稿的每一句都是照抄原文，说的就是原文的意思：要写一份真的错了的草稿。"]
    why = answer.get("why", "") if isinstance(answer, dict) else ""
    if not isinstance(why, str) or not why.strip():
        return False, ["检查判它为 draft。可程序分不出一份草稿是“骗过了检查”还是“本来就对”：请在 trick.json 里加一个 "
                       "\"why\" 字段，写明它错在哪里、属于第 04 课“这些检查不能证明什么”一节的哪一种盲区。"]
    return True, [f"检查判它为 draft，而你说它错在：{why.strip()[:60]}", "对照第 04 课“这些检查不能证明什么”一节，这正是出处核对证明不了的地方。"]


MIN_EXAMPLE = 3   # 4 字片段：比这少（不到 6 个字，“公告”“试用期”）的不算示范，谁都会写
EXAMPLE_FIELDS = ("draft", "text", "snippet", "instruction")   # 练习四、五、六交的就是这几种文字
EXAMPLE = re.compile(r"""["']?\b(?:draft|text|snippet|instruction)["']?\s*[:=]\s*("(?:[^"\\\n]|\\.)*")""")


@functools.lru_cache(maxsize=None)   # 老师的套件：一次运行只读一遍
def shipped_examples():
    """老师这份套件里写着的每一份草稿、记录正文、搜索结果的摘要和 instruction，和它的出处：
    checks/ 和资料文件里 .json 的这些字段（measured.json 只有量出的结论，不看），课文和 checks/ 里 .py 写成 "draft": "…"、
    text="…" 的字符串（课文的示范，检查和建班用的草稿、记录、结果对，评测集里的回答）。练习四、五、六交的文字照抄（或几乎照抄）
    其中一段就不算做完：见 shipped_copy。返回 [(字数（letters）, 文字, 出处)]，按字数排好。"""
    found = {}
    files = sorted((ROOT / "lessons").glob("*.md")) + sorted(CHECKS_DIR.glob("*.py")) + [SHIPPED_DOCUMENTS] \
        + [path for path in sorted(CHECKS_DIR.glob("*.json")) if path.name != "measured.json"]
    for path in dict.fromkeys(files):
        try:
            text = path.read_text(encoding="utf-8-sig")
            if path.suffix != ".json":
                strings = [json.loads(quoted) for quoted in EXAMPLE.findall(text) if "\\x" not in quoted]   # \x1b 是 Python 的写法，不是 JSON 的
            else:
                strings, stack = [], [json.loads(text)]
                while stack:
                    value = stack.pop()
                    if isinstance(value, dict):
                        strings += [item for field, item in value.items() if field in EXAMPLE_FIELDS and isinstance(item, str)]
                    stack += value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        except (OSError, ValueError):
            continue
        for string in strings:
            found.setdefault(string, f"{path.parent.name}/{path.name}")
    return sorted(((letters(text), text, source) for text, source in found.items()), key=lambda entry: entry[0])


def letters(text):
    """有几个字：字母、汉字各算一个，一串数字算一个，标点、空白不算（和 4 字片段 retrieval_qa.shingles 的数法一样）。
    比示范时先按它粗筛。"""
    return len(re.findall(r"\d+(?:\.\d+)?|[^\W\d_]", text))


@functools.lru_cache(maxsize=None)   # 同一段示范的片段只算一次：每次只算字数差不多的那些
def example_pieces(text):
    return retrieval_qa.shingles(text)


def shipped_copy(text):
    """text 照抄的套件示范的出处（“lessons/05-untrusted-materials.md”），不是照抄的返回 None。4 字片段的 Jaccard 有
    NEAR_DUPLICATE（第 05 课认“同一规则的两个版本”的那个相似度）那么高就算照抄：一字不差的、改个标点、换个网址里的
    gift → gift2、换了数字，都还是同一段。先按字数（letters）粗筛：Jaccard 有 0.8，两边的片段数最多差 1.25 倍；
    字数留出余地（全角、大小写折叠后个别字会变），差得更多的不比。"""
    mine = retrieval_qa.shingles(text)
    if len(mine) < MIN_EXAMPLE:
        return None
    examples, count = shipped_examples(), letters(text)
    start = bisect.bisect_left(examples, count * 0.7 - 2, key=lambda entry: entry[0])
    for size, example, source in examples[start:]:
        if size > count / 0.7 + 2:
            break
        theirs = example_pieces(example)
        if len(theirs) >= MIN_EXAMPLE and similar(mine, theirs):
            return source
    return None


def similar(mine, theirs):
    """两段文字的 4 字片段（retrieval_qa.shingles）几乎一样：Jaccard 有第 05 课认“同一规则的两个版本”的 NEAR_DUPLICATE 那么高。
    照抄示范（shipped_copy）和 grade.py 比全班的作品都用它。"""
    return len(mine & theirs) / len(mine | theirs) >= retrieval_qa.NEAR_DUPLICATE


def own_added(documents):
    """资料里学生自己加的记录：不是发布版的（按 id），也不是照抄套件示范的（shipped_copy）。"""
    shipped_ids = {record["id"] for record in shipped()}
    return [record for record in documents if record["id"] not in shipped_ids and not shipped_copy(record["text"])]


def unverified_claims(documents):
    """练习五只凭学生说“这句是指令”做完时，那几句（“X8「……」”）：清单没认出它们，程序核对不了它真是指令还是一句普通的话，
    所以只给老师看（grade.py 记“待看”），不算分。有会触发警告的新记录时是空的：那条程序自己认得出来。"""
    added = own_added(documents)
    if any(instruction_like(record["title"] + " " + record["text"]) for record in added):
        return []
    return [f"{record['id']}「{visible(record['instruction'].strip(), 60)}」" for record in added
            if isinstance(record.get("instruction"), str) and record["instruction"].strip()
            and record["instruction"].strip() in record["title"] + " " + record["text"]]


def exercise_5(documents, path):
    shipped_ids = {record["id"] for record in shipped()}
    new = [record for record in documents if record["id"] not in shipped_ids]
    if not new:
        return False, ["资料里还没有你新加的记录。照第 05 课第一节，加一条正文里藏着指令的记录。"]
    added = own_added(documents)   # 只改标点、空格、一两个字也是照抄
    if not added:
        copied = "、".join(f"{record['id']}（{shipped_copy(record['text'])}）" for record in new)
        return False, [f"{copied} 照抄的是套件里的示范记录。练习要你换个说法：自己写一句藏在正文里的指令，看警告认不认得。"]
    flagged = [r["id"] for r in added if instruction_like(r["title"] + " " + r["text"])]
    if flagged:
        return True, [f"{'、'.join(flagged)} 会触发警告；引用它的草稿一律要人工复核：照第 05 课的 obey-cite.json 写一份引用它的回答，用 --check-draft 看它变成 needs_review。"]
    named = [r for r in added if isinstance(r.get("instruction"), str) and r["instruction"].strip()]
    for record in named:   # 学生说“这句是指令”：核对它真在这条记录里，而且清单确实没认出来
        sentence = record["instruction"].strip()
        if sentence not in record["title"] + " " + record["text"]:
            return False, [f"{record['id']} 的 instruction 写的是“{sentence[:30]}”，可这句话不在它的标题或正文里：请原样抄写。"]
        return True, [f"{record['id']} 里的“{sentence[:30]}”没有被清单认出来——你找到了一种能绕过第一道筛子的说法。"
                      "想一想：这时是哪一道防线在起作用？",
                      "程序分不出这句是指令还是一句普通的话：老师的 grade.py 会把它列出来，由老师看。"]
    ids = "、".join(r["id"] for r in added)
    fields = {r["id"]: instruction_field(r) for r in added}
    misspelt = [(record_id, field) for record_id, field in fields.items() if field not in (None, "instruction")]
    if misspelt:   # 拼错了字段名：指出来，和资料文件、回答文件的字段拼错时一样
        record_id, field = misspelt[0]
        return False, [f"你加了 {ids}，它没有触发警告。{record_id} 有一个 {visible(field)} 字段，是不是想写 instruction？"]
    return False, [f"你加了 {ids}，它没有触发警告。如果里面藏着一句清单没认出的指令，就在这条记录里加一个 "
                   "\"instruction\" 字段，原样抄写那句话，工具会核对它确实在正文里；没有指令的普通记录不算做完。"]


def instruction_field(record):
    """练习五的记录里写“这句是指令”的字段名：instruction，或拼错了的（instrcution、Instruction）；没有是 None。
    只认差一两个字母的（相似度 ≥ 0.8：拼错的都在 0.9 左右）：section、direction 这样的别的字段不是它。"""
    if "instruction" in record:
        return "instruction"
    keys = {key.lower(): key for key in record if isinstance(key, str)}   # INSTRUCTION、Instruction 也算
    guess = closest("instruction", list(keys), cutoff=0.8)
    return keys[guess] if guess else None


def own_file_problem(number, kit):
    """练习 number 自己写的文件（OWN_FILES）在 kit 里、却读不了时的原因；读得了、或没有这个文件时是 None。
    用的是那个练习自己的读法：domains.json 按 --domains 的规矩读（deny 写了两次也算读不了），别的按 student_json。"""
    path = kit / OWN_FILES[number]
    if not path.is_file():
        return None
    if number == 7:
        try:
            retrieval_qa.read_domains(str(path))
        except KitError as error:
            return str(error).removeprefix("错误：")
        return None
    return student_json(path)[1]


def student_json(path):
    """读学生写的 JSON 文件：返回 (值, None) 或 (None, 一句说明)。"""
    if not path.is_file():
        return None, f"没有找到 {path}。"
    try:
        data = read_head(path, STUDENT_FILE_LIMIT)
        if len(data) > STUDENT_FILE_LIMIT:   # 读了开头的一截：别拿截断的内容去报“编码不对”或 JSON 错误
            return None, f"{path.name} 超过 {STUDENT_FILE_LIMIT // 1024} KB：练习自己写的文件只有几行，是不是放错了文件？"
        text, problem = decode_student_file(data)   # 记事本的“ANSI”（GBK）、“Unicode”（UTF-16）各说各的
        return (parse_json(text), None) if problem is None else (None, f"{path.name} {problem}。")
    except JsonProblem as problem:
        where = f"第 {problem.line} 行第 {problem.column} 列：" if problem.line else ""
        return None, f"{path.name} 不是合法的 JSON（{where}{problem.what}）。" + (f"{problem.hint}。" if problem.hint else "")
    except OSError as error:
        return None, f"读不了 {path.name}（{describe_os_error(error)}）。"


def exercise_6(documents, path):
    pairs, problem = student_json(path.parent / "pairs.json")
    if problem:
        return False, [problem.rstrip("。") + "。照第 07 课的练习一，把你找的结果对存成套件文件夹里的 pairs.json。"]
    problem = pairs_problem(pairs)
    if problem:
        end = "" if problem.endswith("？") else "。"   # 猜了拼错的字段名，那句以问号结尾
        return False, [f'{problem}{end}pairs.json 应当是数组，每项是 {{"a": {{title, url, snippet}}, "b": {{…}}, "same": true 或 false}}。']
    copied = [f"第 {number} 对（{shipped_copy(pair['a']['snippet'])}）" for number, pair in enumerate(pairs, 1)
              if shipped_copy(pair["a"]["snippet"]) and shipped_copy(pair["b"]["snippet"])]   # a、b 对调、多个空格也认得
    if copied:
        return False, [f"pairs.json 的{'、'.join(copied)}两边的摘要都照抄套件里的示范：练习要你自己找（或自己写）两对。"]
    import web_eval   # 真要判的时候才导入（它带着假搜索接口和 unittest.mock）：还没做第 07 课的，自查不必等它
    for number, pair in enumerate(pairs, 1):   # 摘要太短的结果在过滤那一步就去掉了，轮不到去重：这样的一对判了也不算数
        for side in ("a", "b"):
            snippet = pair[side]["snippet"].strip()
            words = len(re.findall(r"\w", snippet))   # 和第 07 课的过滤数法一样（retrieval_qa.MIN_SNIPPET）
            if words < retrieval_qa.MIN_SNIPPET:
                what = "还是课文里的占位「…」" if snippet == "…" else f"只有 {words} 个字（字母、数字、汉字）"
                return False, [f'第 {number} 对的 "{side}" 的 snippet {what}：不到 {retrieval_qa.MIN_SNIPPET} 个字的摘要在过滤时就去掉了，'
                               "轮不到去重。换成你找到（或自己写）的一段真摘要。"]
    if {pair["same"] for pair in pairs} != {True, False}:
        return False, ["至少要一对 same 为 true（同一篇）、一对为 false（不同的来源）。"]
    missed, merged = web_eval.dedupe_errors(pairs, retrieval_qa.DUPLICATE)
    lines = [f"你的 {len(pairs)} 对里，现在的阈值 {retrieval_qa.DUPLICATE} 漏合并 {len(missed)} 对、误合并 {len(merged)} 对。"]
    lines += [f"误合并：{pair['a']['title'][:20]} ／ {pair['b']['title'][:20]}" for pair in merged]
    lines += [f"漏合并：{pair['a']['title'][:20]} ／ {pair['b']['title'][:20]}" for pair in missed]
    return True, lines


RESULT = {"title": str, "url": str, "snippet": str}   # 课文的模板里标题、摘要是占位的「…」：摘要够不够长，exercise_6 另外说
PAIRS = Many([{"same": bool, "a": RESULT, "b": RESULT}])   # pairs.json 的样子，和套件读别的 JSON 一样交给 shape_problem


def pairs_problem(pairs):
    """pairs.json 的格式哪里不对：说到第几对、哪一边、哪个字段（字段名拼错了猜一猜）；没问题是 None。"""
    problem = shape_problem(pairs, PAIRS)
    if problem:
        quoted = any(isinstance(pair, dict) and isinstance(pair.get("same"), str) for pair in pairs) if isinstance(pairs, list) else False
        return f"pairs.json {problem}" + ("（true、false 不加引号）" if quoted and "same" in problem else "")
    for number, pair in enumerate(pairs, 1):   # 去重要读网址：urllib 读不了的（方括号没配对）在这里就说
        for side in ("a", "b"):
            try:
                urllib.parse.urlsplit(pair[side]["url"])
            except ValueError:
                return f"pairs.json 第 {number} 项的 {side} 的 url「{visible(pair[side]['url'])}」读不了：方括号没有配对？"
    return None


def exercise_7(documents, path):
    domains = path.parent / "domains.json"
    if not domains.is_file():
        return False, [f"没有找到 {domains}。照第 07 课的练习二，在套件文件夹里写一个 domains.json。"]
    try:
        policy = retrieval_qa.read_domains(str(domains))
    except KitError as error:
        return False, [str(error).removeprefix("错误：")]
    if not policy.get("deny"):
        return False, ["domains.json 的 deny 还是空的：加一个不想要的域名，例如论坛的。"]
    import web_eval   # 同练习六：真要判的时候才导入
    before = [source["url"] for source in web_eval.sources_for(WEB_QUESTION)]
    after = [source["url"] for source in web_eval.sources_for(WEB_QUESTION, policy)]
    if before == after:
        return False, [f"deny 里的 {'、'.join(policy['deny'])} 不在“{WEB_QUESTION}”的来源里，来源没有变。换一个来源里出现的域名。"]
    if not after:   # 名单把来源全去掉了（allow 写错了一个域名就会这样）：问题没法回答，不算做完
        fix = "检查 allow 里的域名，或先只写 deny" if policy.get("allow") else "deny 里的域名太宽了，只写你不想要的那一个网站"
        return False, [f"按这份名单，“{WEB_QUESTION}”的来源全被去掉了，一条也不剩：{fix}。"]
    gone = [url for url in before if url not in after]
    return True, [f"来源里去掉了 {'、'.join(gone)}，编号重新排过：现在是 {'、'.join(after)}。"]


CHECKS = {1: exercise_1, 2: exercise_2, 3: exercise_3, 4: exercise_4, 5: exercise_5, 6: exercise_6, 7: exercise_7}


def restored(number, documents):
    """练习二、三、五改回去了没有：D01#1 的正文回到 7 天、D01#1 回来了、藏着指令的记录删掉了
    （之后学生自己加的普通记录不算没改回）。"""
    original = next(record for record in shipped() if record["id"] == "D01#1")
    if number == 2:
        return trial(documents) is not None and trial(documents)["text"] == original["text"]
    if number == 3:
        return trial(documents) is not None
    shipped_ids = {record["id"] for record in shipped()}
    return not any(instruction_like(record["title"] + " " + record["text"]) or instruction_field(record)
                   for record in documents if record["id"] not in shipped_ids)


def borrowed_own_file(number, path):
    """老师判学生的文件时用：这个练习自己写的文件（trick.json……）是链接，就不判，返回 ("todo", [说明指向哪里])，
    和 grade.py 一样；不是链接（或这个练习没有自己的文件）时是 None。"""
    name = OWN_FILES.get(number)
    reason = borrowed(path.parent / name) if name else None
    return ("todo", [f"{name} {one_line(reason)}：不算本人的，这个练习不判"]) if reason else None


def judge(number, documents, path, remembered):
    """返回 (状态, 说明的各行)。状态：done、restored（做完并已改回）、earlier（之前做完过，资料后来又改了）、todo。"""
    done, lines = CHECKS[number](documents, path)
    if done:
        return "done", lines
    if number in RESTORE and number in remembered and restored(number, documents):
        if number != 5:
            return "restored", ["之前见过它做完的样子，现在资料又恢复了，这正是要求的。"]
        lines = ["之前见过它做完的样子，现在资料里已经没有会触发警告、或写了 instruction 的新记录，这正是要求的。"]
        shipped_ids = {record["id"] for record in shipped()}
        unnamed = [record["id"] for record in documents if record["id"] not in shipped_ids]
        if unnamed:   # 分不出普通记录和清单没认出的指令：提醒一句，不替学生判
            lines.append(f"你后来加的 {'、'.join(unnamed)} 没有触发警告。如果它也藏着一句指令，"
                         "就给它加 \"instruction\" 字段，原样抄写那句话，再运行一次。")
        return "restored", lines
    if number in SAVED and number in remembered:   # 做过了，资料后来又改了（练习一的关键词撤掉了、正在做练习三……）：做过的仍算数
        lines = ["之前见过它做完的样子；资料后来又改了，现在的样子是：" + lines[0]]
        if number == 2 and trial(documents) is not None and not restored(2, documents):   # 改回时敲错了（17 天）：说出差在哪里
            now, then = where_it_differs(trial(documents)["text"], trial(shipped())["text"])
            lines.append(f"提醒：这个练习做完要改回去（{RESTORE[2]}），现在正文和发布版还不一样："   # visible：不换行空格也写出来
                         f"现在是「…{visible(now)}…」，发布版是「…{visible(then)}…」。")
        return "earlier", lines
    if number in RESTORE:
        lines = lines + ["（如果你已经做完、又改回去了，那就对了：这个练习做完就该改回去。）"]
    return "todo", lines


def same_folder(first, second):
    """是不是同一个文件夹（macOS、Windows 的文件名不分大小写：~/KIT 和 ~/kit 是同一个，所以不比路径的写法）。"""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def where_it_differs(now, original):
    """两段文字从第一处不同的地方起，各取前后几个字：("试用期 17 天；", "试用期 7 天；这")。"""
    start = next((i for i, (a, b) in enumerate(zip(now, original)) if a != b), min(len(now), len(original)))
    return now[max(0, start - 6):start + 8], original[max(0, start - 6):start + 8]


def saved_copy(number, checks_dir=None):
    """练习 number 做完时的资料存在哪里：checks/.exercise-done/exercise-2.json（checks_dir 默认是进度文件所在的文件夹）。"""
    return (checks_dir or PROGRESS.parent) / DONE_FOLDER / f"exercise-{number}.json"


def keep_done_copy(number, path):
    """把做完时的资料原样存一份（只在判套件自己的资料时）。写不了也不要紧：只是老师少了一份能重判的存档。"""
    try:
        saved = saved_copy(number)
        saved.parent.mkdir(exist_ok=True)
        saved.write_bytes(read_head(path, retrieval_qa.MAX_FILE_BYTES))
        return saved
    except OSError:
        return None


def shown_by_saved_copy(number, checks_dir, current=None):
    """存档能不能证明练习 number 做完过：它和它所在的文件夹都不是链接，它也没有和别的文件共用内容，读得了，
    用这份检查重判仍是做完的样子；给了 current（副本现在的资料）时，发布版里除 D01#1 以外的记录，存档里都有、和现在
    或发布版写得一样（随手写的存档缺这些记录）。grade.py 用它判学生的副本。"""
    saved = saved_copy(number, checks_dir)
    try:
        info = os.lstat(saved)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 or saved.parent.is_symlink() or checks_dir.is_symlink():
        return False
    documents, error = load(saved)
    if error is not None or not CHECKS[number](documents, saved)[0]:
        return False
    return current is None or same_other_records(documents, current)


def same_other_records(saved, current):
    """发布版里 D01#1 以外的每条记录，存档里都有，而且和发布版或现在的资料写得一样（练习只改 D01#1、只加新记录；
    第 06 课以后收紧过的关键词也认得）。"""
    pick = lambda documents: {r["id"]: (r["title"], r["text"], r["keywords"]) for r in documents}   # noqa: E731
    original, now, kept = pick(shipped()), pick(current), pick(saved)
    return all(record_id in kept and kept[record_id] in (original[record_id], now.get(record_id))
               for record_id in original if record_id != "D01#1")


def remembered_done(track, progress=None):
    """见过做完的练习编号。progress 默认是本套件的进度文件；grade.py 用它读学生副本里的那一份。"""
    if not track:
        return set()
    try:   # read_head 只读普通文件：进度文件是命名管道也不会卡住
        return set(parse_json(read_head(progress or PROGRESS, 4096).decode("utf-8")).get("done", []))
    except (OSError, ValueError, AttributeError, TypeError, JsonProblem):
        return set()


def remember(numbers, track):
    """把现在做完的练习记下来（只在判套件自己的资料时）。写不了也不要紧：只是少了“做完并已改回”的提示。"""
    seen = remembered_done(track) | set(numbers)
    if not track or seen == remembered_done(track):   # 没有新做完的，就不写文件
        return
    try:
        PROGRESS.write_text(json.dumps({"done": sorted(seen)}), encoding="utf-8")
    except OSError:
        pass


LABELS = {"done": "已完成", "restored": "已完成（做完并已改回）", "earlier": "已完成（之前做完过）", "todo": "还没完成"}


def main(argv):
    options = parse_tool_options(argv, USAGE, __doc__, values=("--documents",), positionals=1)
    if not options["args"]:
        print("练习（python3 checks/exercise.py 编号，或 all）：")
        for number, text in EXERCISES.items():
            print(f"  {number}  {text}")
        return 0
    choice = options["args"][0]
    if choice != "all" and not (choice.isascii() and choice.isdigit() and int(choice) in EXERCISES):
        print(f"错误：练习编号应当是 1–{len(EXERCISES)} 之一或 all，实际是 {choice}。不带参数运行可以列出全部练习。",
              file=sys.stderr)
        return 2
    path = ROOT / DOCUMENTS_NAME if options["--documents"] is None else Path(os.path.abspath(options["--documents"]))   # 不跟着链接走：链接要点名
    track = options["--documents"] is None
    numbers = list(EXERCISES) if choice == "all" else [int(choice)]
    if choice != "all":   # 先说是哪个练习：资料读不了时也一样
        print(f"练习 {choice}：{EXERCISES[int(choice)]}")
    reason = None if track else borrowed(path)
    if reason:   # 和 grade.py、run_checks.py 一样：链接过去的资料是别人的，不判（照判的话，同学做的练习会算在这份上）
        print(f"资料文件 {one_line(options['--documents'])} {one_line(reason)}：不算本人的资料，练习不判。")
        return 1
    documents, error = load(path)
    if error:
        print(f"还没完成：资料文件现在读不了。{error}")
        return 1
    if track:
        remembered = remembered_done(track) | {number for number in SAVED if shown_by_saved_copy(number, PROGRESS.parent)}
    elif not same_folder(path.parent, ROOT):   # 老师判学生副本里的资料：不信它的进度文件（谁都能手写），
        # 只认那个副本 checks/ 里做完时的存档，和 grade.py 一样重判。学生的文件放在老师自己的套件里时，旁边的存档是老师的，不认
        remembered = {number for number in SAVED if shown_by_saved_copy(number, path.parent / "checks", documents)}
    else:
        remembered = set()
    results = {number: (not track and borrowed_own_file(number, path)) or judge(number, documents, path, remembered)
               for number in numbers}
    remember([number for number, (state, _) in results.items() if state == "done"], track)
    kept = {number: keep_done_copy(number, path) for number, (state, _) in results.items()
            if track and state == "done" and number in SAVED}   # 做完时的资料存一份：以后资料再改，老师还能重判
    if choice == "all":
        print(f"资料：{path}")
        print("| 练习 | 状态 | 说明 |\n|---|---|---|")
        for number, (state, lines) in results.items():
            if state == "done" and number in RESTORE:
                lines = lines + ["做完要改回去。"]
            text = "".join(line if line.endswith(("。", "？", "）", "”")) else line + "。" for line in lines)
            print(f"| {number} | {LABELS[state]} | {one_line(text).replace('|', '｜')} |")   # 学生写的换行、竖线不拆开表格
    else:
        state, lines = results[numbers[0]]
        print(f"{LABELS[state]}：{lines[0]}", *lines[1:], sep="\n")
        if state == "done" and numbers[0] in RESTORE:
            print(f"提醒：这个练习做完要改回去（{RESTORE[numbers[0]]}），免得影响后面的练习。")
        if kept.get(numbers[0]):
            print(f"做完时的资料已存为 {kept[numbers[0]].relative_to(ROOT).as_posix()}（交作业时一起交）：以后资料再改，"
                  "这里和老师的 grade.py 仍用它核对你做过。")
    return 0 if all(state != "todo" for state, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(run_tool(main))
