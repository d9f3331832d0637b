"""性能实测：打印一张表，和目标对照。它不是检查：结果随机器而变，不会让任何检查失败。

    $ python3 checks/bench.py               # 下面六组都量（最后一组把整套检查跑一遍：2 核的机器上十来秒）
    $ python3 checks/bench.py --no-suite    # 跳过整套检查那一组

1. 只检索的命令（python3 retrieval_qa.py --retrieve-only 试用几天？）对比 python3 -c "import json"：
   交替各跑 25 次取中位数，目标：最多慢 15 ms。字节码照常缓存（放在临时目录），和学生第二次运行时一样；
   直接运行的 retrieval_qa.py 本身每次都要编译（Python 不缓存直接运行的脚本），这几毫秒算在里面。
2. 在进程内读取一份生成的 100 条、将近 100 KB 的资料并检索一次：中位数，目标 ≤ 50 ms；再找第 05 课的警告（run() 每次都找）：
   目标 ≤ 200 ms。再读一份 100 条几乎一样的记录并找警告（版本警告要两两比较，最费时）：目标 ≤ 200 ms。
3. 出处核对：3 个片段、5 句话的草稿（自带样例）：中位数，目标 ≤ 5 ms。同样的片段各写长到 400 字，
   500 字和 2000 字的草稿：目标 ≤ 10 ms 和 ≤ 50 ms；再用一批不像回复的草稿（同一个字、标点、数字重复；表里写着几种）
   各量一次，报最慢的。带依据（evidence）的核对：同样的片段，约 500 字和约 1150 字的草稿带着每句的依据，
   目标和草稿长度成正比，500 字 ≤ 5 ms。再在新进程里跑 --check-draft：逐句核对上限以内最费事的带依据回答（100 条依据、
   95 句各带一个数的草稿），目标 ≤ 2 s；800 条依据的（超过上限，该马上交给人），目标 ≤ 1 s。parse_json 读 1 MiB 以内最费事的
   JSON（13 万个对象；4 万个字段各写两遍）：目标 ≤ 1.5 s。
4. 问题：一批怪问题（同上的重复片段，加上命中关键词、编号、<material> 的重复）各写到 1000 字和 2000 字（问题的上限），
   在进程内走完检索、组装请求和出处核对：报 2000 字里最慢的，目标 ≤ 50 ms；再报 2000 字比 1000 字慢几倍里最大的，
   和长度成正比时约为 2，目标 ≤ 2.5（长度的平方会是 4）。
5. 全班：checks/grade.py 判 40 份副本（kit_helpers.build_class 建的班，20 份老实的、15 份耍花招的、5 份故意做坏的：
   一千多层的文件夹、6 GB 的稀疏文件、一万个小文件……），目标 ≤ 10 s。
6. 整套检查（python3 -W error checks/run_checks.py）跑一遍：墙钟时间和 CPU 时间（它和它开的全部子进程），
   目标（两核机器，第一次之后）墙钟 ≤ 5 s、CPU ≤ 10 s；再列出最慢的三项检查。第一次跑（或代码改过）要把标注集量一遍，
   这一遍单列一行、不和目标比，接着再跑一遍。
   有检查被跳过（比如资料文件改过）时，这一项不算达到：跳过的检查不花时间。
"""
import contextlib
import io
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date

from kit_helpers import ROOT, SCRIPT, build_class, clean_env, committed_results, parse_tool_options, remove_tree, run_tool

import model_reply_assistant
import reply_assistant
import retrieval_qa

RUNS = 25
SUITE_WALL, SUITE_CPU = 5, 10   # 两核的机器上，整套检查的墙钟和 CPU 时间的目标（秒）


def startup(env):
    """交替运行两条命令，返回 (import json 的中位数, 只检索的中位数)，单位毫秒。"""
    bare = [sys.executable, "-c", "import json"]
    kit = [sys.executable, str(SCRIPT), "--retrieve-only", "试用几天？"]
    subprocess.run(kit, capture_output=True, env=env)   # 先跑一次，让字节码缓存就位
    times = {"bare": [], "kit": []}
    for _ in range(RUNS):
        for name, command in (("bare", bare), ("kit", kit)):
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, env=env)
            times[name].append((time.perf_counter() - started) * 1000)
    return statistics.median(times["bare"]), statistics.median(times["kit"])


def big_documents(directory):
    """生成 100 条互不相同的记录，文件将近 100 KB（上限 102400 字节）。固定随机种子，每次都一样。"""
    pool = "资料检索回复草稿试用部署服务器内存磁盘席位账户团队管理员客服对话记录保存删除数据安全审核发送规则说明"
    rng = random.Random(2026)
    records = [{"id": f"R{n:03d}", "title": f"规则 {n}", "keywords": [f"词{n}", pool[n % 40:n % 40 + 2]],
                "text": "".join(rng.choice(pool) for _ in range(305)) + f"，数值 {n}。"} for n in range(100)]
    path = os.path.join(directory, "big.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(records, handle, ensure_ascii=False)
    return path


def near_duplicate_documents(directory):
    """100 条几乎一样的记录（只差一个数字），文件不超过上限：第 05 课“同一规则的两个版本”要两两比较，最费时的一种资料。"""
    rule = "会员规则：积分可以兑换洗车时长，每 100 分抵 5 元，单笔最多抵扣实付金额的 20%，护理液和特价商品不参与积分抵扣。"
    records = [{"id": f"R{n:03d}", "title": "会员规则", "keywords": ["积分", f"词{n}"],
                "text": (rule * 5).replace("5 元", f"{n} 元")} for n in range(100)]
    while len(json.dumps(records, ensure_ascii=False).encode("utf-8")) > 100 * 1024:
        records = [dict(record, text=record["text"][:-20]) for record in records]
    path = os.path.join(directory, "near.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(records, handle, ensure_ascii=False)
    return path


def median_ms(action, repeat=30):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def grounding_sample():
    """自带的 3 个片段和 5 句话（和随套件发布的资料同样的内容），不依赖你改过的资料文件。"""
    hits = [{"id": "T", "title": "产品规则 · 试用", "text": "新注册的团队可以开通体验版，试用期 7 天；这段时间里能使用资料检索和回复草稿两项功能。"},
            {"id": "S", "title": "产品规则 · 发送边界", "text": "助手只负责写回复草稿，从不自动发送；每一条回复都要由客服人员检查后亲手发出。"},
            {"id": "V", "title": "部署说明 · 服务器资源", "text": "私有部署需要一台 4 核 CPU、8 GB 内存的服务器，另外为资料索引预留 50 GB 磁盘空间。"}]
    draft = ("您好，体验版的试用期是 7 天。私有部署需要一台 4 核 CPU、8 GB 内存的服务器。资料索引要预留 50 GB 磁盘空间。"
             "助手只负责写回复草稿，从不自动发送。每一条回复都要由客服人员检查后亲手发出。")
    return draft, ["T", "S", "V"], hits


def long_chunks(hits):
    """同样的 3 个片段各写长到 400 字（正文重复几遍）：片段越长，每句话要比的越多。"""
    return [dict(hit, text=(hit["text"] * (400 // len(hit["text"]) + 1))[:400]) for hit in hits]


def long_draft(size):
    """size 字左右的草稿：样例的 5 句话和 3 句不带数字的话轮流写，在句末截断（数字的密度和一般的回复差不多）。"""
    sentences = ["您好，体验版的试用期是 7 天。", "这段时间里能使用资料检索和回复草稿两项功能。", "私有部署需要一台 4 核 CPU、8 GB 内存的服务器。",
                 "助手只负责写回复草稿，从不自动发送。", "资料索引要预留 50 GB 磁盘空间。", "每一条回复都要由客服人员检查后亲手发出。",
                 "新注册的团队可以开通体验版。", "如有其他疑问，欢迎继续咨询。"]
    draft, index = "", 0
    while len(draft) + len(sentences[index % len(sentences)]) <= size:
        draft += sentences[index % len(sentences)]
        index += 1
    return draft


def evidence_sample(size):
    """带依据的回答：3 个 400 字左右的片段，写着一条条不同的规则（“甲子项目每次收费 11 元，须提前 2 天预约”）；草稿照着
    规则一句一句写到 size 字左右，每句一条依据（claim 是这句，quote 是那条规则）。返回 (草稿, 来源, 片段, 依据)，结论是 draft。"""
    names = [a + b for a in "甲乙丙丁戊己庚辛壬癸" for b in "子丑寅卯辰巳午未申酉戌亥"]
    rules = [f"{name}项目每次收费 {11 + index} 元，须提前 {2 + index % 5} 天预约" for index, name in enumerate(names)]
    hits, draft, evidence = [], "", []
    for number in range(3):
        chosen = rules[number::3]
        text = ""
        for rule in chosen:
            if len(text) + len(rule) + 1 > 400:
                break
            text += rule + "；"
        hits.append({"id": f"E{number}", "title": f"收费规则 {number}", "text": text})
    for rule in [rule for hit in hits for rule in hit["text"].split("；") if rule]:
        if len(draft) + len(rule) + 1 > size:
            break
        draft += rule + "。"
        evidence.append({"claim": rule, "source": next(hit["id"] for hit in hits if rule in hit["text"]), "quote": rule})
    return draft, [hit["id"] for hit in hits], hits, evidence


def largest_evidence_answer(items=retrieval_qa.MAX_EVIDENCE):
    """逐句核对的上限以内最费事的带依据回答：95 句、每句一个数的草稿，items 条依据，每条的引文里又是一个对不上的数
    （每个数都要去算一步算不算得出）。items 超过 MAX_EVIDENCE 时，它该在上限那里就停下。"""
    names = "甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥"
    sentences = [f"{names[i % 22]}{names[i // 22]}类记录保存 {i} 天" for i in range(1, 96)]
    evidence = [{"claim": sentences[i % 95], "source": "D04#1", "quote": f"保存 {i} 天"} for i in range(items)]
    return {"status": "draft", "draft": "。".join(sentences) + "。", "sources": ["D04#1"], "evidence": evidence}


def check_draft_seconds(answer, directory):
    """python3 retrieval_qa.py --check-draft 一份回答，在新进程里走完一遍的秒数（三次取中位数）。"""
    path = os.path.join(directory, "answer.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(answer, handle, ensure_ascii=False)
    command = [sys.executable, str(SCRIPT), "--check-draft", path, "保存多久？"]
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, env=clean_env())
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def odd_drafts(size):
    """不像回复的草稿（“不管是什么字”）：同一个字、标点、数字、引号、链接、可以和不予……重复到 size 字。"""
    pieces = ["a", "。", " ", "1", "1.", "1,", "\n", "「", "「a」", "一", "十", "万", "http://a", "a.", "7 天，", "一共 8 元。",
              "可以不予", "以内超过", "周一至周日，", "[D01#1]", "资料里没有提到", "“试用期”", "半小时", "由客户承担，"]
    return {piece.strip() or repr(piece): (piece * (size // len(piece) + 1))[:size] for piece in pieces}


def odd_questions(size):
    """不像问题的问题：odd_drafts 的那些，加上命中关键词的、写着编号的、想伪造资料块的，各重复到 size 字。"""
    questions = odd_drafts(size)
    for piece in ("试用", "部署几核", "试用几天？", "D01#1 ", "<material id=\"X\">", "sk-abc "):
        questions[piece.strip()] = (piece * (size // len(piece) + 1))[:size]
    return {name: "问" + text[1:] for name, text in questions.items()}   # 开头换成字：只有空白的问题是用法错误


def question_path(question, documents):
    """一个问题在程序里要走的路（不调用模型）：检查长度、检索、组装请求、核对一份引用第一个命中片段的草稿。"""
    question = model_reply_assistant.checked_question(question)
    hits = retrieval_qa.retrieve(question, documents) or documents[:1]
    reply_assistant.build_messages(question, hits)
    retrieval_qa.check_grounding("体验版的试用期是 7 天。私有部署需要 4 核 CPU。", [hits[0]["id"]], hits, question)


def main(argv):
    options = parse_tool_options(argv, "用法：python3 checks/bench.py [--no-suite]", __doc__, flags=("--no-suite",))
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        env = clean_env(PYTHONPYCACHEPREFIX=directory)
        bare, kit = startup(env)
        rows.append(("只检索命令 − python3 -c \"import json\"", f"{kit:.1f} ms − {bare:.1f} ms = {kit - bare:.1f} ms",
                     "≤ 15 ms", kit - bare <= 15))
        path = big_documents(directory)
        size = os.path.getsize(path)
        documents = retrieval_qa.load_documents(path)
        load = median_ms(lambda: retrieval_qa.retrieve("规则 42 的词42", retrieval_qa.load_documents(path)))
        warn = median_ms(lambda: retrieval_qa.document_warnings(documents), repeat=5)   # 每两条比一次，像不像同一规则的两个版本
        rows.append((f"读取 100 条、{size} 字节的资料并检索；再找警告", f"{load:.1f} ms；{warn:.0f} ms", "≤ 50 ms；≤ 200 ms", load <= 50 and warn <= 200))
        near = near_duplicate_documents(directory)
        spent = median_ms(lambda: retrieval_qa.document_warnings(retrieval_qa.load_documents(near)), repeat=5)   # 读资料，再像 run() 那样找警告
        rows.append((f"读取 100 条几乎一样的记录（{os.path.getsize(near)} 字节，每两条都像同一规则的两个版本）", f"{spent:.0f} ms",
                     "≤ 200 ms", spent <= 200))
    draft, sources, hits = grounding_sample()
    grounding = median_ms(lambda: retrieval_qa.check_grounding(draft, sources, hits), repeat=100)
    rows.append(("出处核对：3 个片段、5 句话", f"{grounding:.2f} ms", "≤ 5 ms", grounding <= 5))
    hits = long_chunks(hits)
    for size, target in ((500, 10), (2000, 50)):   # 草稿越长越慢，但应当和长度成正比（每句只切一次词）
        text = long_draft(size)
        spent = median_ms(lambda: retrieval_qa.check_grounding(text, sources, hits), repeat=10)
        rows.append((f"出处核对：3 个 400 字的片段、{len(text)} 字的草稿", f"{spent:.1f} ms", f"≤ {target} ms", spent <= target))
        odd = {name: median_ms(lambda: retrieval_qa.check_grounding(text, sources, hits), repeat=3)
               for name, text in odd_drafts(size).items()}
        slowest = max(odd, key=odd.get)
        rows.append((f"出处核对：3 个 400 字的片段、{size} 字的怪草稿（{len(odd)} 种里最慢的：“{slowest}”重复）",
                     f"{odd[slowest]:.1f} ms", f"≤ {target} ms", odd[slowest] <= target))
    for size in (500, 2000):   # 带依据的核对：500 字不超过 5 ms，和草稿长度成正比（3 个 400 字的片段写得下 1100 多字的草稿）
        text, cited, chunks, evidence = evidence_sample(size)
        spent, target = median_ms(lambda: retrieval_qa.check_grounding(text, cited, chunks, "", evidence), repeat=10), 5 * len(text) / 500
        rows.append((f"带依据的核对：3 个 400 字的片段、{len(text)} 字的草稿、{len(evidence)} 条依据", f"{spent:.1f} ms",
                     f"≤ {target:.1f} ms", spent <= target))
    # 没给依据的分句要和片段的每个分句比：资料文件允许的最长片段（6 万字）、45 句都没给依据的草稿
    huge = [{"id": "Z01#1", "title": "长片段", "text": "，".join(f"第{i}项服务收费{i * 7}元，须提前{i % 9 + 1}天预约" for i in range(2500))}]
    draft = "。".join(f"这项服务收费{i * 7 + 1}元，提前几天预约，由顾客承担运费" for i in range(45)) + "。"
    start = time.perf_counter()
    retrieval_qa.check_grounding(draft, ["Z01#1"], huge, "多少钱？", [{"claim": "这项服务收费1元", "source": "Z01#1", "quote": "第0项服务收费0元"}])
    spent = time.perf_counter() - start
    rows.append((f"带依据的核对：{len(huge[0]['text'])} 字的片段、{len(draft)} 字的草稿、45 句没给依据", f"{spent:.2f} s", "≤ 2 s", spent <= 2))
    # 100 条依据的引文都不在一个 6 万字的片段里：每条都要和整个片段比一次“有几成对得上”（片段的索引只建一次）
    rng = random.Random(1)
    noise = [{"id": "N1", "title": "长片段", "text": "".join(chr(0x4E00 + rng.randrange(20000)) for _ in range(60000))}]
    start = time.perf_counter()
    retrieval_qa.check_grounding("试用。", ["N1"], noise, "", [{"claim": "试用", "source": "N1", "quote": f"甲乙丙丁{i}"} for i in range(100)])
    spent = time.perf_counter() - start
    rows.append(("带依据的核对：6 万字的片段、100 条引文都不在片段里", f"{spent:.2f} s", "≤ 2 s", spent <= 2))
    # 没写依据：6 万字、不带句号的片段（1.2 万个分句），2000 字、400 个分句的草稿：每个分句要和片段的每个分句比
    clauses = ["".join(chr(0x4E00 + rng.randrange(20000)) for _ in range(4)) for _ in range(12400)]
    start = time.perf_counter()
    retrieval_qa.check_grounding("，".join(clauses[12000:]) + "。", ["N2"], [{"id": "N2", "title": "长片段", "text": "，".join(clauses[:12000])}])
    spent = time.perf_counter() - start
    rows.append(("出处核对：6 万字不带句号的片段、400 个分句的草稿", f"{spent:.2f} s", "≤ 2 s", spent <= 2))
    # 100 条依据的引文都在一个 1.6 万个分句的片段里，claim 一个包含另一个（“试用 q1”在“试用 q10”里）
    many = [{"id": "P1", "title": "试用", "text": ",".join(f"q{i}" for i in range(16000))}]
    start = time.perf_counter()
    retrieval_qa.check_grounding("试用 q1。", ["P1"], many, "试用几天", [{"claim": f"试用 q{i}", "source": "P1", "quote": f"q{i}"} for i in range(1, 101)])
    spent = time.perf_counter() - start
    rows.append(("带依据的核对：100 条依据、1.6 万个分句的片段、claim 一个包含另一个", f"{spent:.2f} s", "≤ 2 s", spent <= 2))
    with tempfile.TemporaryDirectory() as directory:   # 上限以内最大的带依据回答，和远超上限的（一条条核对的话是平方级的）
        for items, target in ((retrieval_qa.MAX_EVIDENCE, 2.0), (800, 1.0)):
            spent = check_draft_seconds(largest_evidence_answer(items), directory)
            rows.append((f"--check-draft：{items} 条依据、95 句各带一个数的草稿", f"{spent:.2f} s", f"≤ {target:g} s", spent <= target))
    import model_reply_assistant   # 读 1 MiB 以内最费事的 JSON：一项项都要看（13 万个对象），或者每个字段都写了两遍
    for name, text in (("13 万个对象", "[" + ",".join(['{"a":1}'] * 130000) + "]"),
                       ("4 万个字段各写两遍", "{" + ",".join(f'"k{n}": 1, "k{n}": 2' for n in range(40000)) + "}")):
        started = time.perf_counter()
        with contextlib.suppress(model_reply_assistant.JsonProblem):
            model_reply_assistant.parse_json(text)
        spent = time.perf_counter() - started
        rows.append((f"parse_json：{len(text) // 1024} KB 的 JSON，{name}", f"{spent:.2f} s", "≤ 1.5 s", spent <= 1.5))
    reply = {"content": json.dumps({"status": "draft", "draft": "试用期是 7 天。", "sources": [f"X{n}" for n in range(60000)]}), "finish_reason": "stop"}
    started = time.perf_counter()   # 1 MiB 以内、来源最多的回答：每个来源都要验样子，出错时才算它在哪里
    with contextlib.suppress(model_reply_assistant.NoAnswer), contextlib.redirect_stderr(io.StringIO()):
        model_reply_assistant.checked_answer(reply, ["D01"])
    spent = time.perf_counter() - started
    rows.append(("回答检查：6 万个来源（都不是发送的）", f"{spent:.2f} s", "≤ 1.5 s", spent <= 1.5))
    documents = retrieval_qa.load_documents(str(ROOT / "checks" / "shipped_documents.json"))
    spent = {size: {name: median_ms(lambda: question_path(text, documents), repeat=5) for name, text in odd_questions(size).items()}
             for size in (1000, 2000)}
    slowest = max(spent[2000], key=spent[2000].get)
    growth = {name: spent[2000][name] / spent[1000][name] for name in spent[2000]}
    steepest = max(growth, key=growth.get)
    rows.append((f"问题 2000 字：检索、组装请求、出处核对（{len(growth)} 种怪问题里最慢的：“{slowest}”重复）",
                 f"{spent[2000][slowest]:.1f} ms", "≤ 50 ms", spent[2000][slowest] <= 50))
    rows.append((f"问题从 1000 字到 2000 字慢几倍（最大的：“{steepest}”重复；成正比约为 2，平方是 4）",
                 f"{growth[steepest]:.2f} 倍", "≤ 2.5 倍", growth[steepest] <= 2.5))
    directory = tempfile.mkdtemp()
    try:
        build_class(directory, size=40)
        started = time.perf_counter()
        graded = subprocess.run([sys.executable, str(ROOT / "checks" / "grade.py"), *sorted(os.listdir(directory))],
                                capture_output=True, cwd=directory, env=clean_env())
        spent = time.perf_counter() - started
    finally:
        remove_tree(directory)
    measured = f"{spent:.2f} s" + ("" if graded.returncode == 0 else f"（退出码 {graded.returncode}，这一项不算）")
    rows.append(("全班：grade.py 判 40 份副本（含故意做坏的）", measured, "≤ 10 s", spent <= 10 and graded.returncode == 0))
    slowest = []
    if not options["--no-suite"]:
        suite_rows, slowest = measure_suite()
        rows += suite_rows
    print(f"{date.today()}，Python {platform.python_version()}，{platform.system()} {platform.machine()}，"
          f"{os.cpu_count()} 核")
    print("| 项目 | 实测 | 目标 | 达到 |\n|---|---|---|---|")
    for name, measured, target, met in rows:
        print(f"| {name} | {measured} | {target} | {'—' if met is None else '是' if met else '否'} |")
    if slowest:
        print("\n整套检查里最慢的三项（秒，几组同时跑时量的）：")
        print("\n".join(f"  {seconds:.2f}  {name}" for name, seconds in slowest))
    return 0


def children_cpu():
    """本进程开过的、已经结束的子进程（连同它们的子进程）一共用了多少 CPU 秒；Windows 上没有 resource，返回 None。"""
    try:
        import resource
    except ImportError:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_suite():
    """把整套检查跑一遍（和 README 的命令一样），返回 (表里的几行, 最慢的三项 [(检查名, 秒)])。
    墙钟时间从启动到结束；CPU 时间是它和它开的全部子进程用掉的（Windows 上量不了，写“—”）。
    checks/measured.json 是旧代码量的时，这一遍要真的量标注集：照样列出，但不和目标比，并说该先运行什么。"""
    row, slowest = run_suite()
    if not committed_results():
        name, measured, _, _ = row
        row = (name.replace("（", "（checks/measured.json 是旧代码量的，这一遍真的量了标注集：先运行 python3 checks/grounding_eval.py --save；", 1),
               measured, "—", None)
    return [row], slowest


def run_suite():
    with tempfile.TemporaryDirectory() as directory:
        timings = os.path.join(directory, "timings.json")
        # 和在终端里敲这条命令一样：它自己建这次运行的临时目录（不沿用 bench.py 的）
        env = {name: value for name, value in clean_env(KIT_CHECK_TIMINGS=timings).items()
               if name != "KIT_CHECK_RUN_DIR"}
        cpu_before, started = children_cpu(), time.perf_counter()
        done = subprocess.run([sys.executable, "-W", "error", str(ROOT / "checks" / "run_checks.py")], capture_output=True, env=env)
        wall, cpu_after = time.perf_counter() - started, children_cpu()
        spent = None if cpu_after is None else cpu_after - cpu_before
        seconds = json.loads(open(timings, encoding="utf-8").read()) if os.path.exists(timings) else {}
    summary = (done.stdout.decode("utf-8", errors="replace").strip().splitlines() or ["没有输出"])[-1]
    complete = " 0 skipped" in summary and " 0 failed" in summary
    measured = f"墙钟 {wall:.1f} s，CPU {'—' if spent is None else f'{spent:.1f} s'}" + ("" if complete else "（有检查跳过或失败，这一项不算）")
    met = complete and wall <= SUITE_WALL and (spent is None or spent <= SUITE_CPU)
    row = (f"整套检查 python3 -W error checks/run_checks.py（{summary}）", measured, f"墙钟 ≤ {SUITE_WALL} s，CPU ≤ {SUITE_CPU} s", met)
    return row, sorted(seconds.items(), key=lambda item: -item[1])[:3]


if __name__ == "__main__":
    sys.exit(run_tool(main))
