"""资料检索问答：先用人工写的关键词找出命中的资料片段，再决定要不要请模型写草稿。

    $ python3 retrieval_qa.py --retrieve-only 试用几天？

用法：python3 retrieval_qa.py [问题] [--retrieve-only | --check-draft 文件] [--documents PATH] [--timeout 秒] [--trace]
      python3 retrieval_qa.py --web [问题] [--retrieve-only | --check-draft 文件] [--domains 文件] [--html 文件] [--timeout 秒] [--trace]

按关键词从资料文件里找出和问题相关的片段（最多 3 条）；不加 --retrieve-only 时，只把命中的片段发给模型写草稿，
检查回答的格式和引用，再把草稿的数字、链接、引文、句子和引用的片段对照。stdout 上永远只有一个 JSON 对象；
提示、进度和错误都写到 stderr。命令行约定见 README.md，后面的课程都建立在它上面。

  问题                省略时会在 stderr 上提示“问题：”，再从标准输入读一行
  --retrieve-only     只检索：不调用模型，也不读取密钥
  --check-draft 文件  不调用模型：把文件里保存的回答 {status, draft, sources} 当作模型的回答来检查
  --documents PATH    改用另一个资料文件（默认：脚本旁边的 retrieval_documents.json）
  --timeout 秒        模型请求的总时限（默认 60 秒）；超时不自动重试。和 --web 一起用时也是搜索连同重试的总时限（默认 30 秒）
  --trace             在 stderr 上逐段报告：资料、检索、上下文、请求、响应、核对（耗时和数量，不含密钥，文字最多 40 字）
  --web               第 07 课（选读）：不读资料文件，改用联网搜索（SEARCH_PROVIDER、SEARCH_API_KEY、SEARCH_API_URL，见第 07 课）
  --domains 文件      和 --web 一起用：{"deny": [域名, …], "allow": [域名, …]}，不要或只要这些网站
  --html 文件         和 --web 一起用：另写一个小网页，草稿里的 [n] 链到来源
  -h, --help          显示这段说明

零命中时不调用模型，也不读取密钥，也不检查 --check-draft 的文件。
退出码：0 正常；1 需要人工复核；2 用法或资料文件错误；3 模型调用失败；4 模型回答被拒绝；5 结果写不出去；130 被 Ctrl-C 中断。
"""


import functools
import json
import os
import re
import sys
import time
import unicodedata

from model_reply_assistant import (ENVIRONMENT_HELP, WEB_RULES, JsonProblem, Many, NoAnswer, Text, fold, ask_model, ask_question, decode_student_file, visible,
                                   checked_answer, citation_problems, cited_sources, describe_os_error, describe_value, make_rejection, one_line,
                                   parse_json, parse_options, parse_timeout, read_domains, read_head, read_saved_reply, shape_problem, shown_safely,
                                   web_hits, write_html, write_json)
from reply_assistant import (EXIT_OK, EXIT_OUTPUT, EXIT_REVIEW, checked_question, error_line, make_kit_error,
                             run_cli)

# 这个文件按课程顺序读：第 03 课（读资料、检索）→ 第 04 课（核对出处）→ 第 05 课（不可信的资料、--trace），
# 最后是把各课的步骤串起来的 run()。共用的外壳在 reply_assistant.py，模型调用和回答的检查在 model_reply_assistant.py。


# ---------- 第 03 课：读取资料、关键词检索、只发送命中的片段 ----------

# 资料默认放在脚本旁边，和从哪个目录启动无关。用 os.path 而不用 pathlib：
# pathlib 会顺带导入 urllib，而只检索的路径要和启动 Python 一样轻。
KIT_DIR = os.path.dirname(os.path.realpath(__file__))
DOCUMENTS_PATH = os.path.join(KIT_DIR, "retrieval_documents.json")
MAX_FILE_BYTES = 100 * 1024   # 100 KB：手工切分的教学资料远小于此；更大的文件说明该换工具了（第 03 课）
MAX_RECORDS = 100             # 1–100 条：再多就不是“人工切分、人工写关键词”了（第 03 课）
MAX_HITS = 3                  # 最多取 3 条：教学取值，不是通用最优参数（第 03 课“想多了解”）
# 每条记录的样子（shape_problem 照它验，第 02 课的文件）：编号、标题、关键词是一行文字，正文可以换行；
# 每一段都要有字或数字——只有零宽字符的关键词比较时什么也不剩，会命中每一个问题
RECORD = {"id": Text(), "title": Text(), "text": Text(lines=True), "keywords": Many([Text()])}


def load_documents(path=DOCUMENTS_PATH):
    """读取资料文件并逐条检查；任何一处不合规都停下，不跳过坏记录。可疑但合规的地方在 stderr 上警告（第 05 课）。"""
    return read_and_check(path)[0]


def read_and_check(path):
    """load_documents 的两步：读字节、逐条检查。返回 (记录, 读到的字节数)：--trace 报的字节数就是读到的，
    不再去看一次文件（它可能已经被删了）。"""
    shown = os.path.basename(path) if path == DOCUMENTS_PATH else path
    raw = read_document_bytes(path, shown)
    text, problem = decode_student_file(raw)   # 编码不对、是空的：和学生别的文件一个说法
    if problem:
        raise make_documents_error(shown, problem)
    data = parse_documents_json(text, shown)
    check_records(data, shown)
    print_warnings(document_warnings(data), shown)   # 合规但可疑的地方只警告：第 05 课（见本文件第 05 课那一节）
    return data, len(raw)


def nfkc(text):
    """NFKC 规范化：全角字母数字变半角（Ａ→A、１→1），数学粗体、圈字母这类“花体”也变回普通字母（𝐀→A、ⓐ→a）。"""
    return unicodedata.normalize("NFKC", text)


def retrieve(question, documents, limit=MAX_HITS):
    """命中词越多越靠前，同分按 id 升序，最多返回 limit 条。"""
    wanted, scored = fold(question), []   # fold（第 02 课的文件）：全角半角、大小写、看不见的字符都不算差别
    for record in documents:
        matched = {}
        for keyword in record["keywords"]:
            key = fold(keyword)
            if key in wanted and key not in matched:   # 同一个词的不同写法只算一次
                matched[key] = keyword
        if matched:
            scored.append((-len(matched), record["id"], record, sorted(matched.values())))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [{"id": record["id"], "title": record["title"], "text": record["text"], "matched": matched}
            for _, _, record, matched in scored[:limit]]


def build_materials(hits):
    """要交给模型的资料：只有命中片段的 id、标题和正文（命中词只是给人看的，不发送）。"""
    return [{"id": hit["id"], "title": hit["title"], "text": hit["text"]} for hit in hits]


def show_sources(sources, dropped, stale):
    """--web 时给人看的来源（stderr）：编号、标题、网址、日期；去掉的只说条数和第一条的原因，细节在 JSON 的 dropped 里。"""
    if stale is not None:
        age = f"{stale / 60:.0f} 分钟" if stale >= 60 else f"{stale:.0f} 秒"
        print(f"搜索没有成功，用的是 {age}前的缓存：结果可能不是最新的。", file=sys.stderr)
    print(f"联网搜到 {len(sources)} 条来源：" if sources else "联网搜索没有可用的来源。", file=sys.stderr)
    for source in sources:
        print(f"  [{source['n']}] {source['title']}  {source['url']}  {source['published'] or '日期不详'}", file=sys.stderr)
    if dropped:
        print(f"  另有 {len(dropped)} 条没有用，例如：{dropped[0][1]}", file=sys.stderr)


def show_hits(hits):
    """给人看的检索结果（stderr）；机器读的 JSON 在 stdout。"""
    print(f"命中 {len(hits)} 个片段：" if hits else "没有命中任何片段。", file=sys.stderr)
    for hit in hits:
        print(f"  {hit['id']}  {hit['title']}  命中词：{'、'.join(hit['matched'])}", file=sys.stderr)   # 读取时已拒绝控制字符


# 第 03 课 · 读资料的细节：每一种写错都要说清楚是哪个文件、哪一行、哪条记录、哪个字段。


def make_documents_error(shown, what, hint=None, where=""):
    """所有资料错误共用一种格式：文件、位置、问题、提示。"""
    message = f"资料文件 {shown}{where}：{what}。"
    if hint:
        message += f"提示：{hint}" + ("" if hint.endswith("？") else "。")
    return make_kit_error(message)


def read_document_bytes(path, shown):
    try:
        data = read_head(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        hint = "确认它和 retrieval_qa.py 在同一个文件夹，或用 --documents 指定路径"
        if path != DOCUMENTS_PATH:
            hint = ("检查路径的拼写" if os.path.isabs(path) else
                    "--documents 的相对路径从当前文件夹算起，不是从 retrieval_qa.py 所在的文件夹")
        if os.path.exists(path + ".txt"):
            hint = f"同一目录下有 {os.path.basename(path)}.txt，Windows 可能给它多加了 .txt 扩展名"
        raise make_documents_error(shown, "找不到这个文件", hint) from None
    except IsADirectoryError:
        hint = ("资料文件的位置上是一个同名的文件夹：删掉它，把资料文件放回来" if path.endswith(".json")
                else "用 --documents 指向文件本身，而不是它所在的文件夹")
        raise make_documents_error(shown, "这是一个文件夹，不是 JSON 文件", hint) from None
    except OSError as error:
        raise make_documents_error(shown, f"无法读取（{describe_os_error(error)}）") from None
    if len(data) > MAX_FILE_BYTES:
        raise make_documents_error(shown, f"超过了 {MAX_FILE_BYTES} 字节（100 KB）的上限",
                                   "资料应当是人工切分的短片段")
    return data


def parse_documents_json(text, shown):
    try:
        return parse_json(text)
    except JsonProblem as problem:
        if problem.line is None:   # 字段写了两遍、NaN、嵌套太深、整数太长：parse_json 说出了在第几项
            raise make_documents_error(shown, problem.what, problem.hint) from None
        raise make_documents_error(shown, f"JSON 格式不对，{problem.what}", problem.hint,
                                   where=f" 第 {problem.line} 行第 {problem.column} 列") from None


def check_records(data, shown):
    if not isinstance(data, list):
        raise make_documents_error(shown, f"最外层应当是 JSON 数组 [ … ]，实际是{describe_value(data)}")
    if not 1 <= len(data) <= MAX_RECORDS:
        raise make_documents_error(shown, f"应当有 1–{MAX_RECORDS} 条记录，实际有 {len(data)} 条")
    first_seen, look_alike = {}, {}
    for number, record in enumerate(data, start=1):
        label = f"第 {number} 条记录"
        if isinstance(record, dict) and isinstance(record.get("id"), str) and record["id"].strip():
            label += f"（id {json.dumps(record['id'], ensure_ascii=False)}）"
        problem = shape_problem(record, RECORD, root=label)
        if problem:
            keywords = record.get("keywords") if isinstance(record, dict) else None
            words = [w.strip() for w in keywords.replace("，", ",").split(",") if w.strip()] if isinstance(keywords, str) else []
            raise make_documents_error(shown, problem, words and "写成 " + json.dumps(words, ensure_ascii=False))   # "试用, 体验版"
        if record["id"] in first_seen:
            raise make_documents_error(shown, f"{label}的 id 和第 {first_seen[record['id']]} 条重复",
                                       "每条记录的 id 必须唯一")
        folded = fold(record["id"])   # D01#1、d01#1、Ｄ01＃1 折叠后相同
        if folded in look_alike:
            other = look_alike[folded]
            raise make_documents_error(shown, f"{label}的 id 和第 {other} 条的 id {json.dumps(data[other - 1]['id'], ensure_ascii=False)} "
                                       "只差大小写、全角半角、首尾空格或看不见的字符", "人和模型都容易把它们当成同一个片段，请改成明显不同的 id")
        first_seen[record["id"]], look_alike[folded] = number, number


# ---------- 第 04 课：核对出处——草稿的每句话和模型给出的依据（evidence）逐条对照 ----------
# 第 02 课请模型写 evidence：[{claim: 草稿里照抄的一句, source: 片段编号, quote: 那个片段里照抄的一段}]。这一节逐条和已知数据准确比较：引文在不在它说的片段里，
# 每句话只和自己的引文比数量、比肯定否定。从 check_grounding 往下读；nfkc 在第 03 课，one_line、fold 在第 02 课的文件。选读的规则都往同一张 RULES 里加。

RELIABLE = 0.75            # 一条规则标出的回答里至少 75% 真有错，它才改状态；不到的只写进 hints（实测选的取值，见第 04 课）
QUOTE_NEAR = 0.85          # 引文有 85% 以上的字按顺序对得上原文，说“近似”：多半是抄的时候改了字，也要人对照
MAX_DRAFT_CHARS, MAX_DRAFT_NUMBERS, MAX_DRAFT_QUOTES, MAX_EVIDENCE, MAX_OPERANDS = 2000, 100, 5, 100, 24   # 多到这个份上不像回复草稿：不逐句核对，交给人；算账最多用 24 个数
QUOTE = r"「([^」]+)」|『([^』]+)』|“([^”]+)”"
ID_IN_TEXT = r"(?i)[\[【［]\s*([a-z][\w#.\-]*\d[\w#.\-]*)\s*[\]】］]|(?<![0-9a-z#])([a-z]{1,3}\d{1,3}#\d{1,3})(?![0-9a-z#])"   # [D04#1]、X9#2
SENTENCE_END = r"(?i)(?<=[。！？!?\n])|(?<=\.)(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.)(?=\s)"   # 句号后面要有空白；e.g. 这样的缩写不算
LIST_MARKER = r"(?m)^[^\S\n]*(?:#+|[-*•·●▪]|\d{1,2}[.、)）](?!\d)|[（(]\d{1,2}[)）]|第[一二三四五六七八九十]+[、，,：:])\s*"
AMOUNT = r"(\d+(?:,\d{3})*(?:\.\d+)?)\s*(%|个?工作日|个?小时|分钟|个月|周?岁|天|日|周|月|年|元|块|角|折|次|人|名|位|张|副|件|台|晚|公里|米|公斤|克|分|倍)?"
UNIT_NAMES = {"工作日": "个工作日", "个小时": "小时", "个月": "月", "块": "元", "名": "人", "位": "人", "日": "天", "周岁": "岁"}   # 同一单位记成一种
COMPUTING = r"一共|总共|合计|共计|总价|总额|算下来|加起来|折后|优惠后|实付|还差|差价|便宜|[=＝×*+＋]|乘以|加上|减去|打.{0,3}折"
NOT_NEGATIVE = r"未(?=[^\W\d_]{1,3}之?前)|不同|不仅|不论|不管|不断|不错|不久|不过|不当|无论|未来|别的|别人|分别|区别|特别|级别|类别|非常|没问题|没关系|不好意思|不超过|不多于|不高于|不足|未满|不少于|不低于|不到"
NEGATIVE = r"从不|从未|并非|不予|不可以|不可|不能|不得|不会|不用|不必|不需要|不需|不要|不支持|无需|无须|无法|没法|禁止|严禁|停止|暂停|谢绝|拒绝|请勿|切勿|没有|没|未|不|无|别|勿"   # 先去掉 NOT_NEGATIVE 再找
RULES, READERS = [], []   # 规则表（本节末尾，选读和第 05 课再往里加）；读数量的办法（核心只读阿拉伯数字，选读再加中文数字、日期）


def check_grounding(draft, sources, hits, question="", evidence=None, library=None):
    """草稿逐句对照引用的片段，返回 {"status": draft、needs_review 或 rejected, "problems", "hints"：不够可靠的规则找到的}。evidence 为 None：没写依据；library：库里全部的编号。"""
    if too_much_to_check(draft, evidence):   # 不逐句核对，可正文里的越界编号照样拒绝（不写 :=：3.8 以前的 Python 读不懂，说不出“需要 3.10”）
        refused = unsent_id(Sentence(draft), [], Context(draft, hits, question, None, library))
        return {"status": "rejected" if refused else "needs_review", "problems": refused or [too_much_to_check(draft, evidence)], "hints": []}
    found = {"rejected": [], "needs_review": [], "hint": []}
    for rule, problem in grounding_findings(draft, sources, hits, question, evidence, library):
        found[rule.level].append(problem)
    status = "rejected" if found["rejected"] else "needs_review" if found["needs_review"] else "draft"
    return {"status": status, "problems": found["rejected"] or found["needs_review"], "hints": found["hint"]}


def too_much_to_check(draft, evidence=None):
    """太长、数字或引文太多的草稿（连同依据）不逐句核对：返回给人看的说明；正常的返回 None。上限以内，核对的工作量有个头。"""
    everything = draft + "".join(item["claim"] + item["quote"] for item in evidence or [])
    numbers = [len(re.findall(r"\d+|[零一二两三四五六七八九十百千万半]+", text)) for text in (draft, everything)]
    counts = [("草稿", len(draft), MAX_DRAFT_CHARS, "个字", "字"), ("草稿", numbers[0], MAX_DRAFT_NUMBERS, "个数字", "个"), ("草稿", len(re.findall(QUOTE, draft)), MAX_DRAFT_QUOTES, "处引文", "处"),
              ("依据", len(evidence or []), MAX_EVIDENCE, "条", "条"), ("草稿连同依据", len(everything), 3 * MAX_DRAFT_CHARS, "个字", "字"), ("草稿连同依据", numbers[1], 3 * MAX_DRAFT_NUMBERS, "个数字", "个")]
    return next((f"{whose}有 {count} {what}，超过逐句核对的上限 {limit} {unit}，请人工复核" for whose, count, limit, what, unit in counts if count > limit), None)


def grounding_findings(draft, sources, hits, question="", evidence=None, library=None):
    """[(规则, 问题)]：每句交给每条规则，同一个问题只报一次。每条依据归到含有它的 claim 的那句；找不到的 claim 自成一“句”（in_draft 为假）。"""
    cited = [hit for source in sources for hit in hits if hit["id"] == source]
    context = Context(draft, hits, question, evidence, library)
    sentences = [Sentence(piece) for piece in split_sentences(strip_markers(draft)) if re.search(r"[^\W_]", piece)]
    for item in evidence or []:
        homes = [s for s in sentences if plain(item["claim"]) in plain(s.text) or plain(s.text) in plain(item["claim"])] \
            or [Sentence(item["claim"], in_draft=False)]
        sentences += [home for home in homes if home not in sentences]   # 新建的一“句”只加一次
        for home in homes:
            home.claims.setdefault(item["claim"], []).append(item)
    findings = [(rule, problem) for sentence in sentences for rule in RULES for problem in rule.find(sentence, cited, context)]
    return list(dict.fromkeys(findings))


class Sentence:
    """草稿的一句话 text，和归到这句的依据 claims：{claim: [evidence 里写这个 claim 的各条]}（一句用到两个片段就有两条）。"""
    def __init__(self, text, in_draft=True):
        self.text, self.claims, self.in_draft = text, {}, in_draft


class Context:
    """各条规则共用的：草稿、问题、evidence、发送的片段 sent（编号 -> 标题和正文），草稿、引文、问题里的数 numbers（写两次算两个）。"""
    def __init__(self, draft, hits, question, evidence, library=None):
        self.draft, self.hits, self.question, self.evidence = draft, hits, question, evidence
        self.sent = {hit["id"]: hit["title"] + "\n" + hit["text"] for hit in hits}
        self.library = library   # 资料库里全部的编号；None：不知道，只认得发送的
        written = [v for part in re.split(r"[，。；！？\n]", strip_markers(draft)) for v, _ in amounts(part)] if evidence else []
        quoted = [v for text in [question] + [item["quote"] for item in evidence or []] for v, _ in amounts(text)]
        self.numbers = tuple([v for v in written + [v for v in quoted if v not in written] if isinstance(v, float)][:MAX_OPERANDS])   # 日期钟点不算


def split_sentences(text):
    """按 。！？!? 和换行切句；英文句点后面要有空白才算句末，所以 3.5、e.g. 不会被切开。“好。e.g. 这个。” -> ["好。", "e.g. 这个。"]"""
    return [piece.strip() for piece in re.split(SENTENCE_END, text) if piece.strip()]


def strip_markers(text):
    """去掉引用标记、列表序号和 Markdown 的加粗（[1]、［1］、[1, 4]、①、行首的“1.”“- ”、**，D04**#**1 就是 D04#1）：它们不是事实。"""
    return re.sub(LIST_MARKER, "", re.sub(r"\^?[\[［][\d０-９]+(?:\s*[,，、]\s*[\d０-９]+)*[\]］]|[\u2460-\u2473]", " ", text.replace("**", "")))


@functools.lru_cache(maxsize=4096)   # 同一句、同一个片段要和每条依据比一次：记住结果（带依据的核对快几倍，见 bench.py）
def plain(text):
    """比较引文用的写法：只留字母、数字、汉字，数字中间隔着的任何标点、记号、空格都记成点（9,0、9*0 都不是 90）。“试用期 7 天；” -> “试用期7天”。"""
    return "".join(re.findall(r"[^\W_]|(?<=\d)\.(?=\d)", fold(re.sub(r"(?<=\d)[\W_]+(?=\d)", ".", nfkc(text)))))


def unsent_id(sentence, cited, context):
    """正文里写着库里这次没发送的编号（fold 认得的写法都算），或库里根本没有的 [X9]、X9#9：和第 02 课的硬规则一样拒绝。只发 D01#1，“依据 D04#1。” -> 拒绝"""
    return list(ids_not_sent(context.draft or sentence.text, tuple(sorted(context.sent)), tuple(context.library or context.sent), context.library is None))


@functools.lru_cache(maxsize=64)   # 每句话都在整份草稿里找（编号被换行切开也找得到）：同一份草稿只找一遍
def ids_not_sent(text, sent, library, only_sent):
    spaced = lambda i: r"\s*#\s*".join(map(re.escape, fold(i).split("#")))   # noqa: E731  “D01 #1”：# 两边可以有空白
    shown = fold(text) + "\n" + fold(text, as_html=True)   # 草稿原样，和当作网页显示出来的样子（D01<b>#</b>1、D01&#35;1）
    unsent = [i for i in library if i not in sent and re.search(rf"(?<![0-9a-z]){spaced(i)}(?![0-9a-z]|[#.-][0-9a-z])", shown)]
    unknown = [m for pair in re.findall(ID_IN_TEXT, fold(text, keep_case=True)) for m in pair if m and fold(m) not in map(fold, library)]
    return tuple([f"来源「{one_line(i, 40)}」不在这次发送的资料里（只允许 {'、'.join(sent)}）" for i in unsent + unknown if only_sent or i in unsent] + [
        f"来源「{one_line(m, 40)}」不是资料里的编号（编出来的；只允许 {'、'.join(sent)}）" for m in dict.fromkeys(unknown) if not only_sent])


def quote_not_in_source(sentence, cited, context):
    """引文要原样在它说的片段里（空白、标点、全半角、大小写不算差别）；不在时说出自哪个片段，或和原文多近：quote「…三项功能」，原文“…两项功能” -> 近似。"""
    import difflib   # 只有这里用到
    problems = []
    for item in [item for items in sentence.claims.values() for item in items]:
        quote, source, shown = plain(item["quote"]), item["source"], one_line(item["quote"], 31)
        elsewhere = [hit_id for hit_id, text in context.sent.items() if quote in plain(text)]
        if elsewhere and source not in elsewhere:
            problems.append(f"引文「{shown}」不在 {source} 里，它出自 {elsewhere[0]}")
        elif not elsewhere:
            blocks = difflib.SequenceMatcher(None, quote, plain(context.sent.get(source, "")), autojunk=len(quote) * len(context.sent.get(source, "")) > 40_000).get_matching_blocks()
            near = sum(block.size for block in blocks) / max(len(quote), 1)
            problems.append(f"引文在 {source} 里{'近似，需对照原文' if near >= QUOTE_NEAR else '找不到'}：「{shown}」"
                            f"（{near:.0%} 的字按顺序对得上）")
    return problems


@functools.lru_cache(maxsize=64)   # 同一段文字（选读拿整个片段当依据时）每个分句都要读一遍：只读一次。读出的字典别改它
def amounts(text):
    """文字里的数量 {(值, 单位): 写法}：“试用期 7 天，每人 299 元” -> {(7.0, "天"): "7 天", (299.0, "元"): "299 元"}。
    READERS 的读法（选读）先认走它们认得的写法（中文数字、日期、钟点），剩下的阿拉伯数字由这里读。"""
    text, found = nfkc(text), {}
    for reader in READERS:   # 每个读法返回 (读到的 {(值, 单位): 写法}, 把读过的部分换成空格的文字)
        read, text = reader(text)
        found.update(read)
    found.update({(float(number.replace(",", "")), UNIT_NAMES.get(unit, unit)): match.group().strip()
                  for match in re.finditer(AMOUNT, text) for number, unit in [match.groups()]})
    return found


def misstated_amount(sentence, cited, context):
    """claim 里的数量要在这句的引文或问题里（单位相同或一边没写），或是 context.numbers 一步算得出的（选读读出的“一晚”的“一”不算）。例：claim「可以
    试用 10 天」，quote「试用期 7 天」 -> 「10 天」对不上；写着“合计”时给出最接近的算式：「合计 488 元」，quote「398 元……另加 80 元」 -> 398 + 80 = 478。"""
    problems, steps = [], one_step(context.numbers)
    known = set(amounts(" ".join(item["quote"] for items in sentence.claims.values() for item in items) + " " + context.question))
    for claim, items in sentence.claims.items():
        for (value, unit), shown in amounts(strip_markers(claim)).items():
            if shown.startswith("一") or any(value == v and (unit == u or "" in (unit, u)) for v, u in known) or value in steps:
                continue   # steps 里的结果都不等于算它的数：不会拿它自己来算它自己
            near = [r for r, (a, b, _) in steps.items() if value not in (a, b)] if re.search(COMPUTING, claim) and isinstance(value, float) else []
            where = f"按引文的数一步算，最接近的是 {steps[min(near, key=lambda r: abs(r - value))][2]}" if near else f"它的引文「{one_line(items[0]['quote'], 31)}」里没有"
            problems.append(f"「{shown}」和依据对不上：{where}（草稿「{one_line(claim, 31)}」）")
    return problems


@functools.lru_cache(maxsize=16)   # 一份回答里每个数量都拿它来查：同一组数只算一次
def one_step(numbers):
    """两两一步算出的 {值: (数, 数, 算式)}：加减乘除、打折、百分之几。(398.0, 80.0) -> {478.0: (398.0, 80.0, "398 + 80 = 478"), …}"""
    results = {}
    for i, a in enumerate(numbers):
        for b in [b for b in numbers[:i] + numbers[i + 1:] if b]:
            for value, how in ((a + b, "+"), (a - b, "-"), (a * b, "×"), (a / b, "÷"), (a * b / 10, "× 折"), (a * b / 100, "× %")):
                shown = f"{a:g} × {b:g}{how[2:]}" if len(how) > 1 else f"{a:g} {how} {b:g}"
                if round(value, 2) not in (a, b):   # 358.2 这样的钱数，两位小数就够
                    results.setdefault(round(value, 2), (a, b, f"{shown} = {round(value, 2):g}"))
    return results


def opposite_of_quote(sentence, cited, context):
    """同一个词，claim 里没有否定、引文里每一处都被否定（或者反过来）：意思说反了。引文里两种说法都有的词（“可以…但不予…”）
    不在这里比（选读的 opposite_in_part 按分句比）。例：claim「聚餐的餐饮费可以报销」，quote「聚餐餐费不予报销」 -> 「报销」。"""
    problems = []
    for claim, items in sentence.claims.items():
        mine, theirs = negations(claim), negations(" ".join(item["quote"] for item in items))
        flipped = [word for word, states in mine.items() if len(states) == 1 and theirs.get(word) == {not min(states)}]
        problems += [f"意思说反了（「{word}」）：草稿「{one_line(claim, 31)}」，引文「{one_line(items[0]['quote'], 31)}」" for word in flipped[:1]]
    return problems


def negations(text):
    """{两字词: {有没有否定词管着它}}：否定词紧挨在前面才算，中间最多隔一个“再、也、会、能、在”这样的字；含否定字的词不算。
    “可以报销，不予退款” -> {"可以": {False}, "以报": {False}, "报销": {False}, "予退": {False}, "退款": {True}}。"""
    text, found = re.sub(NOT_NEGATIVE, lambda match: "，" * len(match.group()), nfkc(text)), {}
    ends = {match.end() for match in re.finditer(NEGATIVE, text)}   # 每个否定词在哪里结束
    for i, word in [(match.start(), match.group(1)) for match in re.finditer(r"(?=([^\W\d_]{2}))", text)]:
        if not re.search(NEGATIVE, word):
            found.setdefault(word, set()).add(i in ends or i - 1 in ends and text[i - 1] in "再也还可会能得必需须要用在")
    return found


class Rule:
    """规则表的一行：规则 find（名字就是它找的毛病）、抓什么、例子、measured =（标注集上标出的错误回答, 误标的如实回答, 留出集上的这两个数，
    grounding_eval.py --rules 量出）。level：refuses 的拒绝；标出的里至少 RELIABLE 真有错的改 needs_review，其余只进 hints；policy 是约定的级别。"""
    def __init__(self, find, catches, example, measured, refuses=False, policy=None):
        self.find, self.name, self.catches, self.example, self.measured = find, find.__name__, catches, example, measured
        right, wrong = measured[0] + measured[2], measured[1] + measured[3]
        self.level = "rejected" if refuses else policy or ("needs_review" if right and right >= RELIABLE * (right + wrong) else "hint")


RULES += [
    Rule(unsent_id, "正文里写了没发送的片段编号", "试用 7 天 [D04#1]（只发送了 D01#1）", (45, 0, 6, 0), refuses=True),
    Rule(quote_not_in_source, "引文不在它说的片段里", "quote「试用期 10 天」（原文 7 天）", (46, 0, 22, 0)),
    Rule(misstated_amount, "claim 的数量和引文不同", "claim「试用 10 天」，quote「试用期 7 天」", (92, 8, 39, 3)),
    Rule(opposite_of_quote, "claim 和引文一个肯定一个否定", "claim「可以报销」，quote「不予报销」", (21, 4, 4, 2)),
]


# ---------- 第 04 课 · 扩展规则（选读）：依据的覆盖、更多写法和意思规则，以及没写 evidence 时逐句去猜出处 ----------
# 核心已经能核对一份带依据的回答；下面这些都往核心的 RULES、READERS 里加，不改核心：
#   1. 依据的覆盖：有事实的句子都要有依据（no_evidence）；
#   2. 更多数量写法（中文数字、日期、钟点、百分之几……）和算出来的数（miscomputed）；
#   3. claim 和自己的引文再比条件词、谁来承担、一律和限定、引文停在例外前面、链接电话、另一档的词、对不上的分句；
#   4. 回答没写 evidence 时（旧的模型、学生手写的回答），只能逐句和引用的片段对齐去猜：上一版的整套规则，原样保留。
# 每条规则抓到多少、误标多少，写在规则表里（本节末尾）。

# 选读各部分共用的写法（逐句猜的规则也用它们）
# 虚字：只管语气和连接，不说事实。判断“有没有事实”、“说的是不是同一件事”时不算它们
FUNCTION_CHARS = set("的地得了着过是在也就都会要这那个些您你我们他她它有和或与及而但如果为把被让给对向从到还再又很更最已将可以呢吗吧啊呀哦嘛其该每之所")
CLAUSE_BREAK = r"[，；;、。！？!?\n（）()]|,(?!\d{3})|[:：](?!\d)"   # 1,000 和 7:30 里的逗号、冒号不算
CLAUSE_MATCH = 0.5   # 分句和引文（逐句猜时是原文）里的一个分句有一半相同，才算说的是同一件事：带依据时比实字，逐句猜时比二元组（数字不算）
# 链接：http(s)://…、www.…，以及 evil.example/gift 这样的裸域名（先转成半角再找）
LINK = r"(?i)(?:https?://|www\.)[!-~]+|(?<![a-z0-9.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:/[a-z0-9\-._~/?#=&%+:@]*)?"
REASONING = r"所以|因此|也就是说|属于|符合|范围内|这一档|即|按照|根据|换句话说|总的来说|简单来说"
EXCLUSIVE = [{"以内", "以上"}, {"当天", "次日"}, {"或", "并且"}, {"每天", "每周", "每月", "每年"}]
# 谁是客户、说得绝对的词、限定范围的话（“一律可退”对“但定制商品除外”“超过 15 天”）
CUSTOMER = r"您|你|客户|顾客|用户|买家|消费者|会员|乘客|游客|学员|本人|受检者|旅客"   # “由您承担”就是“由客户承担”
# 谁来做、谁来付：“由商家承担”“由顾客自行支付”“由家长自行带孩子前往医院办理”（两个引擎都用 roles 读它）
ROLE = r"由\s*([^\W\d_]{1,12}?)\s*(?:(?:自己|自行|全额|全部|统一|另行|代为)[^\s，。；、]{0,10}?)?(承担|支付|负责|垫付|提供|办理|申请|发起|出具|寄回|赔付|补足|退还)"
UNIVERSAL = r"一经|一律|全部|所有|全都|全程|任何|无论|均可|均不|都可以|都能|都不|都免费|都享|不限|统一|永久"
LIMITER = (r"除[^，。；]{0,12}?(?:外|以外|之外)|但|仅|只有|只限|只能|限|部分|首次|首单|不含|不包括|例外|"
           r"前\s*(?:\d+|[一二两三四五六七八九十]+)\s*个?(?:小时|天|次|名|位|单|月|年|分钟|周|晚)")
CONDITION_LIMIT = r"(?:超过|不足|未满|以内|以上)\s*\d+|\d+\s*(?:天|小时|个月|日)(?:内|以内|之内|后|以后)"   # 超过 15 天、15 天内


# ---- 1. 依据的覆盖：claim 是草稿里的话，有事实的句子都有依据 ----
# 不说事实、不用给依据的话：客套、“资料里没有提到……”、“建议咨询人工客服”
COURTESY = (r"您好|你好|亲爱的|感谢您?的?(?:咨询|提问|来信|耐心|理解|支持|信任)?|谢谢|抱歉|不好意思|很高兴为您(?:解答|服务)?|"
            r"欢迎(?:您)?(?:继续|随时|再次)?(?:咨询|联系|来电|留言)?|祝您[^，。！!]*|希望(?:以上|这些)?(?:信息|内容|回答|解答)?"
            r"(?:能)?对您有(?:所)?帮助|如果?(?:您)?还?有(?:其他|任何|别的)?(?:问题|疑问|需要)|请您?放心|敬请谅解|为您(?:解答|说明|介绍)|"
            r"(?:具体|详细)?(?:规则|情况|说明|信息|内容)?如下|以下是|关于您(?:的|问的|提到的)?[^，。]{0,12}(?:问题)?|"
            r"另外提醒您?|温馨提示|提醒您|需要注意(?:的是)?|请注意|另外|此外")
NOT_IN_DOCUMENTS = (r"(?:资料|文档|规则|片段|信息|条款|说明|目前|这里)[^，。；]{0,8}?(?:没有|没|未|并未|暂未|暂无)"
                    r"(?:提到|提及|说明|写明|涉及|规定|列出|包含|明确)")
NO_CLAIM = NOT_IN_DOCUMENTS + r"|^\s*(?:但|不过|并|也)?(?:没有|没|未|并未)(?:单独|具体|明确)?(?:提到|提及|说明|写明|涉及)|(?:建议|可以|请)您?(?:直接)?(?:咨询|联系|致电|询问|拨打)"
ASKING = r"是否|能否|可否|有没有|会不会|是不是|要不要|多少|什么"   # “其他项目是否需要避开，资料中没有说明”：前半句是在问
# 回答开头结尾的问候、祝愿、感谢和建议，也不用给依据（只在覆盖检查里用；逐句猜的规则不用它，免得少查了事实）
SIGN_OFF = (r"^[^\W\d_]{0,4}(?:你好|您好)|[祝盼]|欢迎|感谢|谢谢|期待|理解|抱歉|打扰|不便|如有(?:疑问|问题|需要)|另外提醒一下|"
            r"建议您|^\s*建议|以[^，。]{0,6}为准")
LEAD_IN = r"(?:^|(?<=[，。；！？!?]))[^，。；！？!?]*[:：](?!\d)"   # 冒号前面是引子（“具体规则如下：”“会有滞纳金：”）
# 没给依据的分句配上猜的出处以后，规则表里拿来比这一对的几条（no_evidence 用）：它们只看这一对，不看别处
PAIR_RULES = {"opposite_of_quote", "opposite_in_part", "antonym_of_quote", "condition_unlike_quote", "role_unlike_quote", "wider_than_quote"}


def once(context, key, make):
    """每份回答只算一次的东西（切好的片段、一句话的结论……），记在这份回答的 context 上：几条规则、每个分句都要用它，
    片段最长可以有几万字。key 说是哪一样，make() 第一次用时算出它。"""
    memo = vars(context).setdefault("memo", {})
    if key not in memo:
        memo[key] = make()
    return memo[key]


def no_evidence(sentence, cited, context):
    """写了 evidence 的回答，每句说事实的话都要有依据。没被任何 claim 盖住的分句，先和引用的片段里最像的那句配成一对
    （猜的出处，derived_pair），照规则表里 PAIR_RULES 那几条比一遍：实测可靠的找到的（说反了、条件变了、换了人……）照实说出两边；
    比不出毛病、却有依据和片段撑不住的数量（unbacked），或者片段里没有像它的话、它却说着条件或谁来做，说它没有依据。例：“试用 7 天，
    超过 30 天自动续费。”只给了“试用 7 天”的依据 -> 「超过 30 天自动续费」没有给出依据。"""
    return judged_without_evidence(sentence, cited, context)[0]


def restated_without_evidence(sentence, cited, context):
    """没给依据的分句里其余的：不够可靠的规则找到的，和没有新数量的分句（换个说法、接着推一句、编了一句没有数的话）。只作提示。"""
    return judged_without_evidence(sentence, cited, context)[1]


def judged_without_evidence(sentence, cited, context):
    """(要人看的, 提示)：no_evidence 和 restated_without_evidence 各取一份，同一句只判一次。"""
    return once(context, ("judged", id(sentence)), lambda: judge_without_evidence(sentence, cited, context))


def judge_without_evidence(sentence, cited, context):
    verdicts, hints, missing, restated = [], [], [], []
    for part in uncovered(sentence, context):
        pair = derived_pair(part, cited, context)
        for rule in [rule for rule in RULES if rule.name in PAIR_RULES] if pair else []:   # 各按自己实测的级别
            found = [f"{problem}（猜的出处 {pair.claims[part][0]['source']}）" for problem in rule.find(pair, cited, context)]
            (hints if rule.level == "hint" else verdicts).extend(found)
        bare = pair is None and (conditions(part) or re.search(ROLE, part))   # 片段里没有像它的话，却说着条件或谁来做
        (missing if bare or unbacked(part, cited, context) else restated).append(part)
    return (verdicts + said_without_evidence(sentence, missing if not verdicts else []),
            hints + said_without_evidence(sentence, restated))


def derived_pair(part, cited, context):
    """没给依据的分句，和引用的片段里实字重合最多的那个分句配成一对（至少重合一半）：一个只有这一对依据的 Sentence；配不上是 None。"""
    pieces = once(context, "pieces", lambda: [(hit_id, piece, content_chars(piece)) for hit_id, piece in dict.fromkeys(
        (hit["id"], piece) for hit in cited for piece in re.split(CLAUSE_BREAK, hit["text"]) if piece.strip())])   # 一样的分句只留一个
    words = content_chars(part)
    source, best, theirs = max(pieces, key=lambda piece: len(words & piece[2]), default=(None, "", set()))
    if len(words) < 2 or len(words & theirs) * 2 < len(words):
        return None
    pair = Sentence(part)
    pair.claims[part] = [{"claim": part, "source": source, "quote": best}]
    return pair


def said_without_evidence(sentence, parts):
    if parts and not sentence.claims:
        return [f"这句话没有给出依据：「{one_line(sentence.text, 31)}」"]
    return [f"这句话里「{one_line(part.strip(), 21)}」没有给出依据" for part in parts]


def uncovered(sentence, context):
    """这句里没被任何 claim 盖住一半以上、又说着事实的分句（写了 evidence 的回答才看；客套话、“资料里没有提到……”不算）。"""
    if context.evidence is None or not sentence.in_draft:
        return []
    whole, covered, parts, start = plain(sentence.text), set(), [], 0
    for claim in map(plain, sentence.claims):   # 每条 claim 在这句里盖住的字（按 plain 的写法数）
        found = 0 if whole in claim else whole.find(claim)
        covered |= set(range(found, found + len(claim))) if found >= 0 else set()
    for part in re.split(CLAUSE_BREAK, re.sub(LEAD_IN, "。", nfkc(sentence.text))):
        found = whole.find(plain(part), start)
        start = found + len(plain(part)) if found >= 0 else start
        if found < 0 or len(covered & set(range(found, start))) * 2 < len(plain(part)):   # 一半以上没被盖住
            parts.append(part)
    if re.search(NOT_IN_DOCUMENTS, sentence.text):   # 说资料里没有的那一句里，提问的分句也不是事实
        parts = [part for part in parts if not re.search(ASKING, part)]
    return [part for part in parts if is_claim(part) and not re.search(SIGN_OFF, part) and
            len(content_chars(re.sub(COURTESY + "|" + REASONING, "", part.strip()))) >= 2]


def unbacked(part, cited, context):
    """没给依据的分句里有没有撑不住的数量：把引用的片段全文和全部引文当作它的依据，照核心的 misstated_amount 比
    （数量要在它们或问题里，或是一步算得出的）。"""
    whole = Sentence(part)
    whole.claims[part] = [{"quote": once(context, "backing", lambda: " ".join([hit["text"] for hit in cited] + [item["quote"] for item in context.evidence]))}]
    return bool(misstated_amount(whole, cited, context))


def is_claim(clause):
    """分句里有没有要核对的事实：去掉客套话以后还剩字，而且不是“资料里没有提到……”“建议咨询人工客服”这类话。"""
    if re.search(NO_CLAIM, clause) and not re.search(r"\d", clause):
        return False
    return bool(re.search(r"[^\W_]", re.sub(COURTESY, "", clause)))


# ---- 2. 更多数量写法 ----

def spelled_amounts(text):
    """READERS 的一种读法：quantities_in 认得的写法都算（七天、八折、百分之二十、半小时、1.2 万元、3 月 5 日、下午 3 点、
    周一至周五……）。返回 ({(值, 单位): 写法}, 读过的部分换成空格的文字)。“八折” -> ({(80.0, "折"): "八折"}, "  ")。
    日期只比月和日（(3, 5)），钟点按分钟（下午 3 点 = 900）。“半小时”和“30 分钟”不算同一个数量：要换算的，人来看。"""
    found, taken, search_from = {}, [False] * len(text), {}
    for kind, value, shown in quantities_in(text):   # 数量按写的先后排好：每种写法从上一次找到的地方往后找
        found[(value[1:] if kind == "日期" else float(value) if isinstance(value, str) else value, kind)] = shown
        start = text.find(shown, search_from.get(shown, 0))
        while start >= 0 and any(taken[start:start + len(shown)]):   # 这几个字已经算在前一个数量里了
            start = text.find(shown, start + 1)
        if start < 0:
            search_from[shown] = len(text)
            continue
        taken[start:start + len(shown)] = [True] * len(shown)
        search_from[shown] = start + len(shown)
    return found, "".join(" " if hit else char for char, hit in zip(text, taken))


READERS.append(spelled_amounts)


# ---- 3. claim 和自己的引文再比几样：先按分句对齐，再比说反了、条件词、谁来承担、一律和限定、例外、链接电话、另一档 ----
PHONE = r"(?<![\d-])(?:\d{3,4}-\d{3,4}-\d{3,4}|\d{3,4}-\d{7,8}|1\d{10})(?![\d-])"   # 400-820-1234、010-12345678、手机号
EXCEPTION = r"^\s*但|除[^，。；]{0,12}?(?:外|以外|之外)|^\s*(?:仅|只)"   # 紧跟在引文后面的分句以它们开头：例外
LIMIT_INSIDE = r"仅限|只限|(?<!提)前\s*(?:\d+|[一二两三四五六七八九十]+)\s*[名位个]"   # 引文所在的分句里、引文外面的限定
# 意思相反的一对词：草稿用一个、它的引文用另一个，意思就反了（否定词另有 NEGATIVE）
ANTONYMS = [("免费", "收费"), ("开放", "关闭"), ("开放", "闭馆"), ("营业", "闭店"), ("营业", "休息"), ("提前", "推迟"), ("提前", "延后"),
            ("允许", "禁止"), ("增加", "减少"), ("上浮", "下调"), ("包含", "不含"), ("退还", "扣除"), ("上午", "下午"), ("全额", "部分")]
# 反义的条件词、单位：claim 和引文只差这一处，意思就变了
OPPOSITES = [{"前", "后"}, {"内", "外"}, {"上", "下"}, {"多", "少"}, {"早", "晚"}, {"或", "和"}, {"或", "且"}, {"高", "低"},
             {"最高", "最低"}, {"之前", "之后"}, {"以前", "以后"}, {"当天", "次日"}, {"小时", "天"}, {"天", "周"}, {"周", "月"},
             {"月", "年"}, {"分钟", "小时"}, {"每天", "每小时"}, {"含", "不含"}]


@functools.lru_cache(maxsize=64)   # 说反了、条件词、谁来承担三条规则都要同一句的对齐：只算一次
def matched_parts(sentence):
    """[(claim 的分句, 它的引文里说同一件事的分句)]：实字重合最多、而且至少占 claim 分句的一半，才算同一件事。
    例：claim「香烟可以报销」，quote「餐饮可以报销，但酒水、香烟不予报销」 -> [("香烟可以报销", "香烟不予报销")]。"""
    pairs = []
    for claim, items in sentence.claims.items():
        theirs = [part for item in items for part in re.split(CLAUSE_BREAK, nfkc(item["quote"])) if part.strip()]
        for part in re.split(CLAUSE_BREAK, nfkc(claim)):
            words = content_chars(part)
            best = max(theirs, key=lambda other: len(words & content_chars(other)), default="")   # 只有标点的引文：没有分句
            if len(words) >= 2 and len(words & content_chars(best)) * 2 >= len(words):
                pairs.append((part, best))
    return pairs


@functools.lru_cache(maxsize=4096)   # 对齐时每个引文分句要和每个 claim 分句比：同一段文字只拆一次
def content_chars(text):
    """实字的集合：汉字和字母，虚字、否定词、数字不算。“可以报销” -> {"报", "销"}。"""
    text = re.sub(NEGATIVE, "", re.sub(NOT_NEGATIVE, "", text))
    return {char for char in re.findall(r"[^\W\d_]", text.casefold()) if char not in FUNCTION_CHARS}


def opposite_in_part(sentence, cited, context):
    """核心的 opposite_of_quote 只比整段引文里说法一致的词；引文里“可以…但不予…”两种都有时，按分句对齐再比：
    claim 的分句和引文里说同一件事的分句有两个以上相同的词，其中一个一边被否定、一边没有。
    例：claim「酒水、香烟可以报销」，quote「餐饮、交通可以报销，但酒水、香烟不予报销」 -> 意思说反了（「报销」）。"""
    problems = []
    mixed = {word for items in sentence.claims.values() for word, states in
             negations(" ".join(item["quote"] for item in items)).items() if len(states) == 2}   # 整段引文里两种说法都有的词
    for part, best in matched_parts(sentence):
        mine, theirs = negations(part), negations(best)
        flipped = [word for word, states in mine.items() if word in mixed and len(states) == 1 and theirs.get(word) == {not min(states)}]
        if flipped and len(set(mine) & set(theirs)) >= 2:   # 只有这一个词相同：说的多半不是同一件事
            problems.append(f"意思说反了（「{flipped[0]}」）：草稿「{one_line(part, 21)}」，引文「{one_line(best, 21)}」")
    return problems


def condition_unlike_quote(sentence, cited, context):
    """条件词换成了相反的：claim 的分句和引文里说同一件事的分句逐字对照，只有一处不同、而且正好是一对反义的条件词
    （前/后、内/外、以上/以下、至多/至少、或/和、小时/天……，见 OPPOSITES），或者用了相反一类的条件词（见 conditions）。
    例：claim「到期前 7 天内未续费的」，quote「到期后 7 天内未续费的」 -> 条件变了（引文是“后”，草稿写成“前”）。"""
    import difflib   # 只有这里、quote_not_in_source 和 closest_passage 用到
    problems = []
    for part, best in matched_parts(sentence):
        mine, theirs = plain(part), plain(best)
        for op, a1, a2, b1, b2 in difflib.SequenceMatcher(None, mine, theirs, autojunk=False).get_opcodes():
            if op == "replace" and any({mine[a1:a2], theirs[b1:b2]} <= group for group in OPPOSITES):
                problems.append(f"条件变了（引文是“{theirs[b1:b2]}”，草稿写成“{mine[a1:a2]}”）：草稿「{one_line(part, 21)}」，"
                                f"引文「{one_line(best, 21)}」")
        words, others = conditions(part), conditions(best)
        problems += [f"条件变了（引文是“{others[other]}”，草稿写成“{word}”）：草稿「{one_line(part, 21)}」，引文「{one_line(best, 21)}」"
                     for name, word in words.items() for group in EXCLUSIVE if name in group
                     for other in sorted(group - {name}) if other in others and other not in words and name not in others]
    return problems


def role_unlike_quote(sentence, cited, context):
    """谁来承担、谁来办换了人：claim「运费由商家承担」，quote「运费由顾客承担」 -> 由谁承担变了。"""
    problems = []
    for part, best in matched_parts(sentence):
        theirs = roles(best)
        for verb, who in roles(part).items():
            if verb in theirs and not same_party(who, theirs[verb]):
                problems.append(f"由谁{verb}变了：引文是「由{theirs[verb]}{verb}」，草稿写成「由{who}{verb}」")
    return problems


def antonym_of_quote(sentence, cited, context):
    """claim 用了一个词，它的引文用的是意思相反的另一个（免费↔收费、开放↔关闭、提前↔推迟……，见 ANTONYMS），
    而且两边都只有自己那一个：意思说反了。例：claim「热水按次收费」，quote「热水免费」 -> 引文是「免费」，草稿写成「收费」。"""
    problems = []
    for claim, items in sentence.claims.items():
        quote = " ".join(item["quote"] for item in items)
        problems += [f"意思说反了：引文是「{theirs}」，草稿写成「{mine}」：草稿「{one_line(claim, 31)}」"
                     for pair in ANTONYMS for mine, theirs in (pair, pair[::-1])
                     if mine in claim and theirs not in claim and theirs in quote and mine not in quote]
    return problems


def wider_than_quote(sentence, cited, context):
    """claim 说“一律”“所有”“都可以”，原文从句首到引文为止却有限定（但…除外、仅、部分、超过 N 天）或者给那样东西
    加了定语（“所有会员”，原文是“金卡会员”）：说得过宽。例：claim「所有包裹一律免费保管」，原文“包裹免费保管 3 天，
    超过 3 天的每天收 1 元” -> 原文有限定「超过 3」。"""
    problems = []
    for claim, items in sentence.claims.items():
        universal = re.search(UNIVERSAL, nfkc(claim))
        if not universal or re.search(LIMITER, nfkc(claim)) or any(universal.group() in item["quote"] for item in items):
            continue
        around = nfkc(" ".join(piece for item in items for piece, _, _ in quote_pieces(item, context)))
        noun = re.match(r"[^\W\d_]{2}", nfkc(claim)[universal.end():]) if universal.group() in ("所有", "任何") else None
        limit = re.search(LIMITER + "|" + CONDITION_LIMIT, around) or \
            (noun and re.search(f"(?<![所有全部一律])[^\\W\\d_]{{2}}{noun.group()}", around))
        if limit:
            problems.append(f"原文有限定「{limit.group()}」，草稿却说「{universal.group()}」：「{one_line(claim, 31)}」")
    return problems


def dropped_exception(sentence, cited, context):
    """引文停在了例外前面：原文里紧接着引文的分句是“但…”“…除外”“仅…”，或者引文盖住的分句里有“仅限…”“前 N 名”，
    草稿里却一点没提（那段话每一部分的实字都有一大半不在草稿里，或者它的数字草稿里没有）。
    例：quote「购买镜架同时配镜片的，镜片享9折」，原文接着是“但渐进多焦点镜片和特价镜片除外” -> 指出这个分句。"""
    problems, items = [], [item for items in sentence.claims.values() for item in items]
    said, numbers = once(context, "said", lambda: (content_chars(context.draft), {value for value, _ in amounts(context.draft)}))
    for item in items:
        for piece, parts, covered in quote_pieces(item, context):   # 紧跟着的例外：从那个分句起到句末，整段说出来
            following = [piece[piece.find(part):].strip().rstrip("。；;") for part in parts[covered[-1] + 1:covered[-1] + 2]
                         if re.search(EXCEPTION, part)]
            inside = [found.group() for i in covered for found in re.finditer(f"(?:{LIMIT_INSIDE})[^，。；]{{0,6}}", parts[i])]
            for phrase in following + inside:   # 提到了例外的任何一部分（“休学的同学除外”）就算提过
                words = [content_chars(re.sub(LIMIT_INSIDE + "|" + EXCEPTION, "", part)) for part in re.split(CLAUSE_BREAK, phrase)]
                words = [part for part in words if part]
                if words and not any(len(part & said) * 2 >= len(part) for part in words) or \
                        not {value for value, _ in amounts(phrase)} <= numbers:
                    problems.append(f"引文停在了例外前面：原文还有「{one_line(phrase.strip(), 31)}」，草稿没有提")
    return problems


def quote_pieces(item, context):
    """引文所在的原文句子（按 。；！？ 切），每句切成分句：[(那一句, 分句们, 引文盖住的分句的位置)]。
    几条规则都要问同一条依据：每份回答里每段引文只找一次（片段最长可以有几万字）。"""
    def find():
        quote = plain(item["quote"])
        found = [(piece, parts, [i for i, part in enumerate(plains) if part in quote or quote in part])
                 for piece, parts, plains in pieces_of(context.sent.get(item["source"], ""))]
        return [(piece, parts, covered) for piece, parts, covered in found if covered]
    return once(context, ("quoted", item["quote"], item["source"]), find)


@functools.lru_cache(maxsize=256)   # 每条依据都要看一遍它的片段：同一个片段只切一次
def pieces_of(text):
    """片段按 。；！？ 切成句、每句再切成分句（空的不要，原文照旧），连同每个分句比较用的写法（plain）：
    “甲，乙。丙。” -> (("甲，乙。", ("甲", "乙"), ("甲", "乙")), ("丙。", ("丙",), ("丙",)))。"""
    pieces = [(piece, [part for part in re.split(CLAUSE_BREAK, piece) if plain(part)])
              for piece in re.split(r"(?<=[。；;！？!?\n])", text) if piece.strip()]
    return tuple((piece, tuple(parts), tuple(map(plain, parts))) for piece, parts in pieces)


def contact_unlike_quote(sentence, cited, context):
    """claim 里的链接和电话号码要和它的引文里的一模一样（链接没写 https:// 时主机和路径相同就算）。
    例：claim「预约请拨 400-820-1235」，quote「预约电话 400-820-1234」 -> 电话 400-820-1235 不在引文里。"""
    problems = []
    for claim, items in sentence.claims.items():
        quotes = nfkc(" ".join(item["quote"] for item in items))
        problems += [f"链接 {link} 不在它的引文里：「{one_line(claim, 31)}」" for link in links_not_in(nfkc(claim), quotes)]
        phones = {re.sub(r"\D", "", phone) for phone in re.findall(PHONE, quotes)}
        problems += [f"电话 {phone} 不在它的引文里：「{one_line(claim, 31)}」"
                     for phone in re.findall(PHONE, nfkc(claim)) if re.sub(r"\D", "", phone) not in phones]
    return problems


def term_from_elsewhere(sentence, cited, context):
    """另一档的词：claim 里有个两字词引文里没有、片段别处有，原文的句首分句或引文盖住的分句里又有个只有第一个字不同的词
    （金卡/银卡、四星/五星、单人/双人）。例：原文“金卡会员享八折，银卡会员享九折”，claim「银卡会员享八折」，
    quote「金卡会员……享八折」 -> 「银卡」在引文那句里是「金卡」。"""
    problems = []
    for claim, items in sentence.claims.items():
        mine = two_char_words(claim)
        around = two_char_words(" ".join(" ".join(parts[i] for i in {0, *covered}) for item in items
                                         for _, parts, covered in quote_pieces(item, context)))
        chunk = " ".join(once(context, ("plain", item["source"]), lambda: plain(context.sent.get(item["source"], ""))) for item in items)
        for term in sorted(word for word in mine - around if word in chunk):
            rivals = sorted(word for word in around - mine if word[1] == term[1] and word[0] not in claim)
            if rivals and not {term[0], rivals[0][0], term[1]} & FUNCTION_CHARS and term[1] not in "内外前后上下" and \
                    negations(claim).get(term) != {True}:   # “不收费”和“免费”是一回事；“内、前”这类由条件词检查管
                problems.append(f"「{term}」在引文那句里是「{rivals[0]}」：草稿「{one_line(claim, 31)}」")
    return problems


@functools.lru_cache(maxsize=1024)   # 同一个片段、同一段引文要和每个 claim 比：只拆一次
def two_char_words(text):
    """相邻两个字（都是汉字或字母，不跨标点和数字）：“金卡享 85 折，银卡” -> {"金卡", "卡享", "银卡"}。"""
    runs = re.findall(r"[^\W\d_]+", nfkc(text).casefold())
    return frozenset(run[i:i + 2] for run in runs for i in range(len(run) - 1))


def clause_unlike_quote(sentence, cited, context):
    """claim 的一个分句和它的引文说的不像同一件事（实字重合不到 CLAUSE_MATCH）：引文可能和这句无关，或者分句是追加的。
    只给出这一对话（草稿 ↔ 引文）让人对照。例：claim「…，并且赠送一次免费清洗」，quote「精洗每次 80 元」。"""
    problems = []
    for claim, items in sentence.claims.items():
        theirs = content_chars(" ".join(item["quote"] for item in items))
        for part in re.split(CLAUSE_BREAK, nfkc(claim)):
            words = content_chars(re.sub(COURTESY, "", part))
            if len(words) >= 3 and is_claim(part) and len(words & theirs) < CLAUSE_MATCH * len(words):
                problems.append(f"草稿「{one_line(part.strip(), 21)}」↔ 引文「{one_line(items[0]['quote'], 31)}」：说的不像同一件事")
    return problems


def link_key(link):
    """比较链接用的样子：去掉结尾的标点和斜杠，协议和主机不分大小写；没写协议的只和去掉协议的比。"""
    link = link.rstrip(".,;:!?)]}'\"/")
    scheme, has_scheme, rest = link.partition("://")
    if not has_scheme:
        scheme, rest = "", link
    host, slash, path = rest.partition("/")
    return scheme.casefold(), host.casefold(), slash + path


def links_not_in(text, source):
    """text 里有、source 里没有的链接（去掉结尾的标点，给人看）：协议、主机、路径都要相同；text 没写 https:// 时，
    主机和路径相同就算有。草稿对片段（changed_link）、claim 对它的引文（contact_unlike_quote）都这样比。"""
    known = {link_key(link) for link in re.findall(LINK, source)}
    return [link.rstrip(".,;:!?)]}") for link in re.findall(LINK, text) for scheme, host, path in [link_key(link)]
            if (scheme, host, path) not in known and not (scheme == "" and any(key[1:] == (host, path) for key in known))]


# ---- 4. 没写 evidence 的回答：逐句和引用的片段对齐，猜每句话的出处（上一版的核对） ----
# 没有依据可查，只能猜：每句话切成分句，和引用的片段里最像的分句对齐，再比数量、链接、引文、意思。

SUPPORT_THRESHOLD = 0.25   # 句子与引用片段的字二元组重合度下限：低于它多半是引错了来源或编出来的
MIN_BIGRAMS = 8            # 少于 8 个二元组的句子不做整句检查（如“资料 [2] 提到”）：太短，重合度没有意义
def guessing(find):
    """把逐句猜的规则 find(分句切好的句子, 引用的片段, GuessContext) 包成规则表的样子：只管没写 evidence 的回答；
    整份草稿只准备一次（prepared_guess），再按句子的原文找到准备好的那一句。"""
    @functools.wraps(find)
    def rule(sentence, cited, context):
        if context.evidence is not None:
            return []
        guess, sentences = prepared_guess(context, cited)
        return find(sentences[sentence.text], cited, guess)
    return rule


def prepared_guess(context, cited):
    """逐句猜要的准备，每份草稿只做一次，记在 context.guess 上：(GuessContext, {句子原文: 切好分句的句子})。
    句子和核心的一样切（split_sentences、strip_markers），所以按原文找得到。"""
    if getattr(context, "guess", None) is None:
        guess = GuessContext(cited, context.hits, context.question)
        sentences = sentences_of(context.draft, guess)
        guess.drafted = [(quantity, clause) for sentence in sentences for clause in sentence.clauses
                         for quantity in clause.quantities]
        guess.position = {id(quantity): index for index, (quantity, _) in enumerate(guess.drafted)}   # 同样的数会写好几次
        context.guess = guess, {sentence.text: sentence for sentence in sentences}
    return context.guess


def sentences_of(draft, context):
    """把草稿切成句子、每句切成分句，去掉不是事实的部分：客套话、“资料里没有提到……”、冒号前的引子
    （“具体规则如下：”“规则写明：「…」”）、行首的列表序号和引用标记。每个分句只切一次词（见 Clause）。"""
    sentences = []
    for piece in split_sentences(strip_markers(draft)):
        if not re.search(r"[^\W_]", piece):   # 只有标点和空白（“。。。”），没有可核对的东西
            continue
        normal = nfkc(piece)
        body = re.sub(LINK, " ", normal)   # 链接由 changed_link 整个核对；里面的冒号和点不能拿来切分句
        body = re.sub(ID_IN_TEXT, " ", body)   # 片段编号不是事实（没发送的编号由 unsent_id 拒绝）
        for hit_id in context.chunks:   # 只有数字的编号（第 07 课的 1、2、3）不删：删了会把草稿里的 14 天删成 4 天
            body = body if hit_id.isdigit() else body.replace(hit_id, " ")
        body = re.sub(LEAD_IN, " ", body)   # 冒号前面是引子，不是事实
        parts = re.split(CLAUSE_BREAK, body)
        if re.search(NOT_IN_DOCUMENTS, body):   # 说资料里没有的那一句里，提问的分句也不是事实
            parts = [part for part in parts if not re.search(ASKING, part)]
        clauses = [Clause(shown_like(part, piece, normal), context) for part in parts if is_claim(part)]
        sentences.append(GuessSentence(piece, clauses))   # 没有要核对的分句，链接、引文和编号也照样要查
    return sentences


def shown_like(part, piece, normal):
    """分句按草稿原来的写法给人看（全角逗号还是全角逗号）：在原句里找得到同样的字就用原句里的那一段。normal 是 nfkc(piece)。"""
    start = normal.find(part.strip())
    return piece[start:start + len(part.strip())] if start >= 0 and len(normal) == len(piece) else part


def unsupported_number(sentence, cited, context):
    """每个数量（数字连同单位；日期、时间、星期按值）都要在引用的片段里找得到，或者是客户在问题里给的数，
    或者是用这些数一步算出来的（总价、差价、打折后的价钱……，见 computed）。算错了，就把该有的算式写出来。"""
    problems = []
    for clause in sentence.clauses:
        for quantity in clause.quantities:
            found = context.supports(quantity) or context.accepts_computed(quantity, clause)
            if not found or context.miscomputed(quantity, clause):
                problems.append(context.describe_missing(quantity, clause))
    return problems


def changed_link(sentence, cited, context):
    """草稿里的链接必须和引用的片段里的某个链接完全相同（见 links_not_in）：编出来或截短的链接最容易把客户带错地方。"""
    return [f"链接 {link} 不在引用的片段 {context.cited_ids} 中" for link in links_not_in(nfkc(sentence.text), context.source)]


def altered_quote(sentence, cited, context):
    """「」『』“” 里的引文意思是“原文就这么写”：要在引用的片段里原样出现（空白、标点、大小写不算差别）。
    最像的一段相似度 ≥ QUOTE_NEAR 算“近似”，更低算“找不到”；引文里的数字和原文不同，另外点出来。"""
    problems = []
    for match in re.finditer(QUOTE, sentence.text):
        quote = next(group for group in match.groups() if group)
        wanted = tokens(re.sub(LINK, " ", quote))   # 引文里的链接由 changed_link 核对
        if not wanted:
            continue
        similarity, window = context.closest_passage(wanted)
        if similarity == 1.0:
            continue
        shown = one_line(quote, 31)
        if similarity < QUOTE_NEAR:
            problems.append(f"引文在引用的片段中找不到：「{shown}」")
            continue
        changed = sorted(numbers_in("".join(wanted)) - numbers_in(" ".join(window)))
        problems.append(f"引文近似，需对照原文：「{shown}」（相似度 {similarity:.2f}）"
                        + (f"；引文里的数字 {'、'.join(changed)} 和原文不同" if changed else ""))
    return problems


def unsupported_sentence(sentence, cited, context):
    """整句的字二元组（相邻两个字；客套话不算，数字都换成 #）有多大比例出现在引用的片段（和问题）里：重合度低于
    SUPPORT_THRESHOLD，这句话多半不是从片段来的。没被引用的命中片段能达到阈值时，说它更像来自哪个片段。"""
    pairs = sentence.pairs
    if len(pairs) < MIN_BIGRAMS:
        return []
    score = len(pairs & context.supporting_pairs) / len(pairs)
    if score >= SUPPORT_THRESHOLD:
        return []
    problem = f"这句话在引用的片段里找不到依据：「{one_line(sentence.text, 31)}」（重合度 {score:.0%}）"
    others = [(len(pairs & chunk.pairs) / len(pairs), chunk.id) for chunk in context.uncited()]
    better = max(others, default=(0, None))
    if better[0] >= SUPPORT_THRESHOLD:
        problem += f"；这句话更像来自 {better[1]}"
    return [problem]


NEW_CHARS = 4              # 一个分句里有 4 个以上说事实的字是片段里没有的、又占了一大半，就单独指出这个分句
OPERAND_REACH = 8          # 算账只用草稿里这个数前后各 8 个数（和问题里的数）：真算式的数都写在附近，也免得数字一多就越算越慢
ASKED_OPERANDS = 12        # 问题里拿来算账的数：不同的数最多 12 个。真问题里的数一只手数得过来；粘进一长串数字的问题也不会越算越慢
# 草稿里在替客户算账的字样：有它们时，算错的数会连同该有的算式一起指出
ARITHMETIC = r"一共|总共|合计|共计|总价|总额|算下来|加起来|折后|优惠后|实付|[=＝×*+＋]|乘以|加上|减去"
class Chunk:
    """一个命中片段，为核对准备一次：切好的分句、全部数量、二元组、切好的词（找引文用）。"""

    def __init__(self, hit):
        self.id = hit["id"]
        self.text = nfkc(hit["title"] + "\n" + hit["text"])
        self.clauses = [Clause(part, sentence=sentence) for sentence in split_sentences(self.text)
                        for part in re.split(CLAUSE_BREAK, sentence) if part.strip()]
        self.pairs = set().union(*(clause.masked for clause in self.clauses))   # 数字换成 #：措辞由句子检查管，数由数量检查管
        self.quantities = quantities_in(self.text)
        self.units = tokens(self.text)


class Clause:
    """一个分句：原文、切好的词、二元组（数字换成 # 的另算一份，用来找“说的是同一件事”的原文分句）、里面的数量。
    草稿的分句还记下原文里说同一件事的分句 similar、最像的 original 和一样像的 closest（见 GuessContext.align）。"""

    def __init__(self, text, context=None, sentence=""):
        self.text, self.sentence = text.strip(), sentence   # sentence：片段的分句记下它所在的整句（看限定词用）
        units = tokens(re.sub(COURTESY + "|" + REASONING, " ", self.text))
        masked = ["#" if unit[0].isdigit() else unit for unit in units]
        self.pairs, self.masked = set(zip(units, units[1:])), set(zip(masked, masked[1:]))
        self.quantities = quantities_in(self.text)
        scored = context.align(self) if context else []
        self.similar = [other for _, other in scored]   # 最像的在前
        self.closest = [other for score, other in scored if score == scored[0][0]]   # 和最像的一样像的
        self.original = self.similar[0] if self.similar else None


class GuessSentence:
    """草稿的一句话：原文 text、要核对的分句 clauses、全句（客套话除外，数字换成 #）的二元组 pairs。"""

    def __init__(self, text, clauses):
        self.text, self.clauses = text, clauses
        self.pairs = set().union(*(clause.masked for clause in clauses))


@functools.lru_cache(maxsize=256)   # 评测时上千份回答引用同一批片段，每个只准备一次
def prepared_chunk(hit_id, title, text):
    return Chunk({"id": hit_id, "title": title, "text": text})


class GuessContext:
    """一次核对里各条规则共用的东西：发送的片段 chunks（编号 -> 准备好的片段，每个只准备一次）、引用的片段、问题里的数、草稿里的数。"""

    def __init__(self, cited, hits, question):
        self.cited_ids = "、".join(hit["id"] for hit in cited)
        self.chunks = {hit["id"]: prepared_chunk(hit["id"], hit["title"], hit["text"]) for hit in hits}
        self.cited = [self.chunks[hit["id"]] for hit in cited]
        # 句子检查的依据：引用的片段，加上客户的问题（复述问题“您已经用了 20 天”不算编造）
        self.supporting_pairs = set().union(Clause(question).masked, *(chunk.pairs for chunk in self.cited))
        self.clauses = [clause for chunk in self.cited for clause in chunk.clauses]
        self.known = [quantity for chunk in self.cited for quantity in chunk.quantities]
        self.asked = quantities_in(question)
        distinct = {}
        for kind, value, shown in self.asked:   # 同一个数问了几遍，算账时只算一遍
            distinct.setdefault((kind, value), (kind, value, shown))
        self.asked_operands = list(distinct.values())[:ASKED_OPERANDS]
        self.seen = set(nfkc(question).casefold() + "".join(chunk.text for chunk in self.cited).casefold())
        self.source = "\n".join(chunk.text for chunk in self.cited)
        self.source_negations = negated(self.source)
        self.drafted = []   # 草稿里的全部数量和它所在的分句，按写的顺序（prepared_guess 切好句子后填上）
        self.position, self.aligned = {}, {}

    def uncited(self):
        return [chunk for chunk in self.chunks.values() if chunk not in self.cited]

    def align(self, clause):
        """原文里和草稿分句说同一件事的分句：数字换成 # 以后，二元组至少 CLAUSE_MATCH 相同。[(相似度, 分句)]，最像的在前。"""
        if len(clause.masked) < 3:
            return []
        key = frozenset(clause.masked)   # 同样的分句（草稿里重复写的）只对齐一次
        if key not in self.aligned:
            scored = [(len(key & other.masked) / len(key), index) for index, other in enumerate(self.clauses)]
            self.aligned[key] = [(score, self.clauses[index]) for score, index in sorted(scored, key=lambda item: (-item[0], item[1]))
                                 if score >= CLAUSE_MATCH]
        return self.aligned[key]

    def supports(self, quantity):
        """这个数量在引用的片段里或客户的问题里有（换个写法也算，见 same_quantity）；问题里的数字不管单位都算。"""
        kind, value, shown = quantity
        return any(isinstance(value, str) and value == asked for _, asked, _ in self.asked) or \
            any(found_in(where, kind, option) for where in (self.known, self.asked) for option in [value] + am_or_pm(kind, value, shown))

    def accepts_computed(self, quantity, clause):
        """一步算出来的数（和、差、积、百分之几、打几折、两个钟点之间的时长）：算对了就接受。"""
        kind, value, _ = quantity
        return (isinstance(value, str) or kind == "时间") and computed(float(value), kind, self.operands(quantity, clause))

    def miscomputed(self, quantity, clause):
        """“一共”“合计”“=”后面的钱数或时长算错了：就算片段里别处恰好有这个数，也要指出（学 5 小时一共 45 元）。"""
        kind, value, shown = quantity
        text = nfkc(clause.text)   # 数量的写法 shown 是规范化过的
        shows_sum = shown in text and re.search(r"(?:" + ARITHMETIC + r")[^，。；]{0,6}$", text[:text.find(shown)])
        if not shows_sum or kind not in ("元", "小时", "分钟", "天", "月", "年", "%") or not isinstance(value, str):
            return False
        operands = self.operands(quantity, clause)
        return not computed(float(value), kind, operands) and nearest_computation(float(value), kind, operands) is not None

    def operands(self, quantity, clause):
        """能拿来算账的数：[(值, 单位, 从哪来)]——草稿里这个数前后各 OPERAND_REACH 个数（同一个分句里的记作“这句”，
        如“两张一共 78 元”），以及问题里的数。"""
        position = self.position[id(quantity)]
        nearby = self.drafted[max(0, position - OPERAND_REACH):position + OPERAND_REACH + 1]
        found = [(other, "这句" if where is clause else "草稿") for other, where in nearby if other is not quantity]
        found += [(other, "问题") for other in self.asked_operands]
        return [(float(value), kind, origin) for (kind, value, _), origin in found
                if isinstance(value, str) or kind == "时间"]

    def describe_missing(self, quantity, clause):
        """片段里没有这个数量时的说明：算式写错了就给出该有的算式；数字有、单位不同就两种写法都说出来。"""
        kind, value, shown = quantity
        if kind in ("日期", "时间", "星期"):
            return f"{kind}「{shown}」不在引用的片段 {self.cited_ids} 中"
        if re.search(ARITHMETIC, clause.text):
            closest = nearest_computation(float(value), kind, self.operands(quantity, clause))
            if closest:
                return f"算式对不上：草稿写的是「{shown}」，用引用的片段和问题里的数算，应当是 {closest}"
        same_number = [known_shown for known_kind, known_value, known_shown in self.known
                       if known_value == value and "%" not in (kind, known_kind)]
        if kind and same_number:   # 数字在，单位不同：说出片段里这个数是什么，再说片段里这个单位的数是多少（有的话）
            same_kind = list(dict.fromkeys(known_shown for known_kind, _, known_shown in self.known if known_kind == kind))
            also = f"；以「{kind}」为单位的是「{'」「'.join(same_kind[:3])}」" if same_kind else ""
            return f"数量「{shown}」不在引用的片段 {self.cited_ids} 中：片段里的 {value} 是「{same_number[0]}」{also}"
        if not re.search(r"\d", shown):   # 草稿里写的是中文数字（一周、十五元）：照原样说，免得学生找不到“1”
            return f"数量「{shown}」不在引用的片段 {self.cited_ids} 中"
        return f"数字 {value}{'%' if kind == '%' else ''} 不在引用的片段 {self.cited_ids} 中"

    def closest_passage(self, wanted):
        """引用的片段里和引文最像的一段：(相似度, 那一段的词)。不把片段的每个位置都比一遍：先让 difflib 找出引文和
        片段对得上的几段，只在这些位置附近比，窗口放宽 ±2（多一个字少一个字也能对上）。原样出现时相似度是 1.0。"""
        import difflib   # 只有这里、quote_not_in_source 和 condition_unlike_quote 用到
        best, best_window = 0.0, []
        for chunk in self.cited:
            units = chunk.units
            blocks = difflib.SequenceMatcher(None, units, wanted, autojunk=False).get_matching_blocks()
            starts = sorted({max(0, block.a - block.b + shift) for block in blocks if block.size for shift in range(-2, 3)})
            for start in starts:
                for size in range(max(1, len(wanted) - 2), len(wanted) + 3):
                    window = units[start:start + size]
                    if window == wanted:
                        return 1.0, window
                    ratio = difflib.SequenceMatcher(None, wanted, window).ratio()
                    if ratio > best:
                        best, best_window = ratio, window
        return best, best_window


# 数量的各种写法：全角数字、1,000、七天、十四个、七五折、1.2 万元、百分之零点五、日期、钟点、星期。
CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
NUMERAL = "零一二两三四五六七八九十百千万"
# 中文数字最多 16 个字（“一千二百三十四万五千六百七十八”）：更长的一串不是数量，一个也不读（读了也会超出整数的位数上限）
CN_NUMBER = f"(?<![{NUMERAL}])[{NUMERAL}]{{1,16}}(?![{NUMERAL}])(?:点[零一二三四五六七八九]{{1,16}})?"
NUMBER = r"\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"   # 1,000 和 1000、3.5 都是一个数
# 单位和量词，长的写在前面（“个工作日”先于“个”）。等号右边是它算作的单位：7 日和 7 天相同，5 位和 5 名相同
UNITS = {"个工作日": "个工作日", "工作日": "个工作日", "个小时": "小时", "小时": "小时", "分钟": "分钟", "个月": "月",
         "个星期": "周", "星期": "周", "礼拜": "周", "周": "周", "天": "天", "日": "天", "号": "天", "年": "年", "秒": "秒",
         "公斤": "公斤", "千克": "公斤", "kg": "公斤", "克": "克", "公里": "公里", "km": "公里", "厘米": "厘米", "cm": "厘米",
         "毫米": "毫米", "米": "米", "毫升": "毫升", "ml": "毫升", "升": "升", "美元": "美元", "块钱": "元", "块": "元", "元": "元", "%": "%",
         "tb": "TB", "gb": "GB", "g": "GB", "mb": "MB", "kb": "KB", "核": "核", "席位": "席位", "个": "个", "位": "人", "名": "人",
         "人": "人", "次": "次", "条": "条", "项": "项", "张": "张", "份": "份", "台": "台", "件": "件", "节": "节",
         "家": "家", "倍": "倍", "折": "折", "周岁": "岁", "岁": "岁", "斤": "斤", "期": "期", "晚": "晚", "间": "间", "度": "度", "座": "座"}
UNIT = r"(?i) *(" + "|".join(sorted(map(re.escape, UNITS), key=len, reverse=True)) + r")(?![a-z])"   # 长的先认
# 换算：大单位 = 倍数 × 小单位。“一周”和“7 天”、“半小时”和“30 分钟”说的是同一段时间
CONVERSIONS = {("周", "天"): 7, ("天", "小时"): 24, ("小时", "分钟"): 60, ("年", "月"): 12, ("公斤", "克"): 1000,
               ("公斤", "斤"): 2, ("公里", "米"): 1000, ("米", "厘米"): 100, ("升", "毫升"): 1000, ("TB", "GB"): 1024, ("GB", "MB"): 1024}
# 一周、一天、一个月……：“一”后面是这些计时、计钱、计重的单位才算数字 1；“一个问题”“一台服务器”里的“一”只是“一个”的意思
ONE_COUNTS = {"周", "天", "月", "年", "小时", "分钟", "秒", "个工作日", "元", "公斤", "公里", "倍", "晚"}
WEEKDAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
WEEKDAY = r"(?<![\d零一二两三四五六七八九十])(?<![\d零一二两三四五六七八九十] )(?:周|星期|礼拜)([一二三四五六日天])"   # “2 周一直到”里的不是周一
DATE = r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"
ISO_DATE = r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"   # 2025-01-28、2025/1/28
PART_OF_DAY = r"(上午|早上|早晨|中午|下午|傍晚|晚上|夜里|夜间|半夜|凌晨)?"
# 钟点不从空白开始找：不然一长串空格里的每个位置都要把后面的空格再走一遍（长度的平方）
CLOCK = r"(?!\s)" + PART_OF_DAY + r"\s*(\d{1,2})\s*:\s*(\d{2})"
HOUR = r"(?!\s)" + PART_OF_DAY + r"\s*(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*点\s*(半|(\d{1,2})\s*分)?"
TOKEN = r"[a-z0-9]+(?:\.[0-9]+)*|[^\W_]"   # 一个英文词或数字算一个单位，一个汉字算一个单位


def chinese_number(text):
    """“十四”→14，“两”→2，“一百零五”→105，“一万二千”→12000，“七五”→75（七五折），“零点五”→0.5。"""
    if "点" in text:
        whole, _, decimals = text.partition("点")
        return chinese_number(whole or "零") + float("0." + "".join(str(CN_DIGITS[char]) for char in decimals))
    if "万" in text:
        high, _, low = text.partition("万")
        return chinese_number(high or "一") * 10000 + (chinese_number(low) if low else 0)
    if len(text) > 1 and not re.search("[十百千]", text):   # 一个个念的数字：七五、二零二五
        return int("".join(str(CN_DIGITS[char]) for char in text))
    value, digit = 0, 0
    for char in text:
        if char in "十百千":
            value += (digit or 1) * {"十": 10, "百": 100, "千": 1000}[char]
            digit = 0
        else:
            digit = CN_DIGITS[char]
    return value + digit


def plain_number(text):
    """例："1,000" -> "1000"；"03" -> "3"；"7.0" -> "7"；"12.50" -> "12.5"。同一个数只有一种写法，才好比较。"""
    number = float(str(text).replace(",", ""))
    if number in (float("inf"), float("-inf")):   # 几百位长的数字串：原样比较
        return str(text)
    return str(int(number)) if number == int(number) else f"{number:.6f}".rstrip("0")


def unit_after(text, start):
    """text 从 start 起（跳过空格）是不是一个单位：返回 (算作的单位, 单位的结束位置)，不是就返回 (None, start)。"""
    match = re.compile(UNIT).match(text, start)
    if not match:
        return None, start
    return UNITS[match.group(1).casefold()], match.end()


def quantities_in(text):
    """文字里的数量：[(种类, 值, 原文写法)]。种类是“日期”“时间”“星期”，或数字后面的单位（没有单位是 ""）。
    "试用期 7 天，3 月 1 日 7:30 起" -> [("日期", (None, 3, 1), "3 月 1 日"), ("时间", 450, "7:30"), ("天", "7", "7 天")]
    一样的值写法不同也相同：03 = 3，1,000 = 1000，七天 = 7 天，1.2 万 = 12000，百分之二十 = 20%，八折 = 付 80%。"""
    text = nfkc(text)
    if not re.search(r"[\d零一二两三四五六七八九十百千万半周期拜]", text):   # 没有数字、“半”、星期的分句（大多数）没有数量
        return []
    found = []   # [(在文字里的位置, 数量)]：最后按位置排好，数量的先后就是写的先后

    def take(pattern, kind, value_of):   # 找到一种写法就记下，再把它从文字里抹掉，免得里面的数字再算一遍
        nonlocal text
        for match in re.finditer(pattern, text):
            value = value_of(match)
            if value is not None:
                found.append((match.start(), (kind, value, match.group().strip())))
        text = re.sub(pattern, lambda m: " " * len(m.group()), text)

    take(DATE, "日期", lambda m: (int(m.group(1)) if m.group(1) else None, int(m.group(2)), int(m.group(3))))
    take(ISO_DATE, "日期", lambda m: (int(m.group(1)), int(m.group(2)), int(m.group(3))))
    take(CLOCK, "时间", clock_minutes)
    take(HOUR, "时间", clock_minutes)
    ranges = weekday_ranges(text)
    for start, end, first, last in ranges:   # 周一至周五：周一到周五每一天都算写过
        found.extend((start, ("星期", day, text[start:end])) for day in range(first, last + 1))
    text = blanked(text, [(start, end) for start, end, _, _ in ranges])
    take(WEEKDAY, "星期", lambda m: WEEKDAYS[m.group(1)])
    take(r"百分之(" + CN_NUMBER + ")", "%", lambda m: plain_number(chinese_number(m.group(1))))
    # 半小时 = 0.5 小时，两个半小时 = 2.5 小时；只从一串数字的第一个字开始找，免得一长串数字每个位置都从头试一遍
    half = r"(?<![\d一二两三四五六七八九十])(\d{1,9}|[一二两三四五六七八九十]{1,9})?个?半个?(小时|天|年|月)"
    for match in re.finditer(half, text):
        whole = match.group(1) or "0"
        found.append((match.start(), (match.group(2), plain_number((int(whole) if whole.isdigit() else chinese_number(whole)) + 0.5),
                                      match.group())))
    text = re.sub(half, lambda m: " " * len(m.group()), text)
    spelled = chinese_numbers(text)
    found.extend((start, (unit, value, text[start:end].strip())) for start, end, unit, value in spelled)
    text = blanked(text, [(start, end) for start, end, _, _ in spelled])
    for match in re.finditer("(" + NUMBER + r")(\s*万)?", text):   # 1.2 万元 = 12000 元
        unit, end = unit_after(text, match.end())
        number = plain_number(float(match.group(1).replace(",", "")) * 10000) if match.group(2) else plain_number(match.group(1))
        found.append((match.start(), (unit or "", number, text[match.start():end].strip())))
    return [discount_as_percent(quantity) for _, quantity in sorted(found, key=lambda item: item[0])]


def blanked(text, spans):
    """把 spans [(起, 止)] 处的字换成同样多的空格，别处的位置不变。一次拼好：在循环里每找到一处就把整段文字
    切开重拼，文字越长越慢（长度的平方）。"""
    pieces, done = [], 0
    for start, end in sorted(spans):
        start = max(start, done)   # 和前一处重叠的部分已经是空格
        if end > start:
            pieces += [text[done:start], " " * (end - start)]
            done = end
    return "".join(pieces) + text[done:]


def discount_as_percent(quantity):
    """“8 折”“八五折”“7.5 折”记成付原价的百分之几：("折", "80", "8 折")、("折", "85", "八五折")。"""
    kind, value, shown = quantity
    if kind != "折":
        return quantity
    number = float(value)
    return kind, plain_number(number * 10 if number < 10 else number), shown


def chinese_numbers(text):
    """带单位的中文数字（七天、十四个、两项、七五折）：[(起, 止, 单位, 值)]。单独的“一”只在计时、计钱、计重的单位前面
    才算（见 ONE_COUNTS），“第一天”这样的序数、“换一天”“某一天”这样的泛指不算。"""
    found = []
    for match in re.finditer(CN_NUMBER, text):
        unit, end = unit_after(text, match.end())
        before = text[match.start() - 1:match.start()]
        start = match.start()
        while start and text[start - 1].isspace():   # 往回跳过空白（不切出前面整段文字再搜：那样越长越慢）
            start -= 1
        if start and re.match(r"\d", text[start - 1]):   # “1.2 万元”的“万”属于前面的阿拉伯数字
            continue
        if unit is None or before == "第" or (match.group() == "一" and (unit not in ONE_COUNTS or before in "换另某哪这那同")):
            continue
        found.append((match.start(), end, unit, plain_number(chinese_number(match.group()))))
    return found


def clock_text(minutes):
    """1170 -> "19:30"；None -> None。"""
    return None if minutes is None else f"{minutes // 60}:{minutes % 60:02d}"


def clock_minutes(match):
    """“下午 3 点半”“晚上 7:30” -> 从零点算起的分钟（930、1170）；下午、晚上的 1–11 点加 12 小时；
    夜里、凌晨的 12 点是 0 点（记成 0，和 24:00 相同）。"""
    part = match.group(1)
    if match.group(2) == "一" and not part and match.group().strip().endswith("点"):
        return None   # “浅一点”“快一点”是“稍微”，不是 1 点（“凌晨一点”“一点半”才是钟点）
    hour = int(match.group(2)) if match.group(2).isdigit() else chinese_number(match.group(2))   # “九点”也是 9 点
    if ":" in match.group():
        minute = int(match.group(3))
    else:
        minute = 30 if match.group(3) == "半" else int(match.group(4) or 0)
    if part in ("下午", "傍晚", "晚上", "夜里", "夜间") and hour < 12:
        hour += 12
    if part in ("夜里", "夜间", "半夜", "凌晨", "晚上") and hour == 12:
        hour = 0
    return (hour * 60 + minute) % (24 * 60) if hour <= 24 and minute < 60 else None


def weekday_ranges(text):
    """“周一至周五”“星期一到星期六”：返回 [(起, 止, 第一天, 最后一天)]。"""
    pattern = WEEKDAY + r"\s*(?:至|到|-|－|~|～|—|–)\s*" + WEEKDAY
    return [(m.start(), m.end(), WEEKDAYS[m.group(1)], WEEKDAYS[m.group(2)]) for m in re.finditer(pattern, text)
            if WEEKDAYS[m.group(1)] <= WEEKDAYS[m.group(2)]]


def numbers_in(text):
    """文本里的数字（不管单位，日期时间不算）：{"7", "12.5%", "3"}。引文里改了数字、第 05 课的“同一规则的两个版本”用它。"""
    return {value + ("%" if kind == "%" else "") for kind, value, _ in quantities_in(text) if isinstance(value, str)}


def tokens(text):
    """比较用的单位：一个英文词或数字一个，一个汉字一个。数字先统一写法（03 → 3、1,000 → 1000、七天 → 7天），
    同一件事换个写法，二元组也相同。"""
    text = re.sub(r"百分之(" + CN_NUMBER + ")", lambda m: f"{plain_number(chinese_number(m.group(1)))}%", nfkc(text))
    text = re.sub(ISO_DATE, lambda m: f"{int(m.group(1))}年{int(m.group(2))}月{int(m.group(3))}日", text)
    for pattern in (CLOCK, HOUR):   # “晚上 7 点”“19:00”都写成 19:00
        text = re.sub(pattern, lambda m: clock_text(clock_minutes(m)) or m.group(), text)
    pieces, done = [], 0
    for start, _, _, value in chinese_numbers(text):   # 只换中文数字，单位留着
        numeral = re.compile(CN_NUMBER).match(text, start).group()
        pieces += [text[done:start], value]
        done = start + len(numeral)
    text = "".join(pieces) + text[done:]
    text = re.sub(NUMBER, lambda m: plain_number(m.group()), text)
    return re.findall(TOKEN, text.casefold())


def found_in(known, kind, value):
    """数量清单 known（片段或分句里的）里有没有草稿的这个数量。时间、星期按值比；日期没写年份时只比月和日；
    片段里没写单位的数字，支持任何单位（百分数除外）；草稿没写单位的数字，片段里有这个数就算；换算得过来的也算（一周 = 7 天）。"""
    if kind in ("时间", "星期"):
        return any(known_kind == kind and known_value == value for known_kind, known_value, _ in known)
    if kind == "日期":
        # 片段里“2025 年 1 月 28 日至 2 月 4 日”的 2 月 4 日没写年份，它也是 2025 年
        years = {known_value[0] for known_kind, known_value, _ in known if known_kind == "日期" and known_value[0]}
        return any(known_kind == "日期" and value[1:] == known_value[1:] and
                   (value[0] is None or value[0] in ({known_value[0]} if known_value[0] else years))
                   for known_kind, known_value, _ in known)
    amounts = [(known_kind, known_value) for known_kind, known_value, _ in known if known_kind not in ("日期", "时间", "星期")]
    with_unit = {known_kind for known_kind, known_value in amounts if known_value == value and known_kind}
    if kind and with_unit and kind not in with_unit and not any(same_quantity(kind, value, other, value) for other in with_unit):
        return False   # 片段里这个数带着别的单位（3 个工作日），草稿写成 3 小时：不算支持
    return any(same_quantity(kind, value, known_kind, known_value) for known_kind, known_value in amounts)


def same_quantity(kind, value, known_kind, known_value):
    """两个数量说的是不是同一个量：值相同、单位相同（一边没写单位也算，百分数除外）；
    换算得过来（1 周 = 7 天，0.5 小时 = 30 分钟）；打折和百分数（8 折 = 付 80% = 优惠 20%）。"""
    if known_value == value and (known_kind == kind or kind == "" or (known_kind == "" and kind != "%")):
        return True
    number, known_number = float(value), float(known_value)
    if {kind, known_kind} == {"折", "%"}:
        return number in (known_number, 100 - known_number)
    if (kind, known_kind) in CONVERSIONS:   # 草稿用大单位：1 周 = 7 天
        return abs(number * CONVERSIONS[kind, known_kind] - known_number) < 1e-6
    if (known_kind, kind) in CONVERSIONS:   # 草稿用小单位：168 小时 = 7 天
        return abs(known_number * CONVERSIONS[known_kind, kind] - number) < 1e-6
    return False


def am_or_pm(kind, value, shown):
    """没写上午下午的“9 点半”也可能是晚上 9 点半：返回另一个可能的时间 [21:30 的分钟数]，别的情况返回 []。"""
    if kind == "时间" and "点" in shown and shown[0].isdigit() and value < 720:
        return [value + 720]
    return []


def one_step_results(operands, kind):
    """用两个数一步能算出的结果：[(结果, 算式的写法, 算式里的数)]，算式要给人看时才由 formula 写出来。
    加减要同一种单位；乘除是单价 × 件数、天数或人数（件数来自问题或同一个分句）；百分数和折扣是“原价 × 百分之几”
    “原价 × (1 − 百分之几)”“100% − 百分之几”；时长是两个钟点相减，钟点加减一段时长还是钟点。"""
    results = []
    for index, (first, first_kind, first_from) in enumerate(operands):
        if kind == "%" and first_kind in ("%", "折"):
            results.append((100 - first, "100% − {}%", (first,)))
        for other, (second, second_kind, second_from) in enumerate(operands):
            if index == other:
                continue
            if first_kind == kind == "时间" and second_kind in ("小时", "分钟"):   # 闭园 21:00 前 1 小时 = 20:00
                minutes = second * 60 if second_kind == "小时" else second
                duration = f"{fmt(second)} {second_kind}"
                results += [((first + minutes) % 1440, "{} + {}", (clock_text(int(first)), duration)),
                            ((first - minutes) % 1440, "{} − {}", (clock_text(int(first)), duration))]
            if first_kind == second_kind == "时间" and kind in ("小时", "分钟") and second > first:
                minutes = second - first
                results.append((minutes / 60 if kind == "小时" else minutes, "{} − {}",
                                (clock_text(int(second)), clock_text(int(first)))))
            if first_kind in (kind, "") and second_kind in (kind, "") and "时间" not in (first_kind, second_kind):
                results += [(first + second, "{} + {}", (first, second)), (first - second, "{} − {}", (first, second))]
            if first_kind in (kind, "") and second_from in ("问题", "这句") and second_kind not in ("%", "折", "时间", kind):
                results.append((first * second, "{} × {}", (first, second)))
                if second:
                    results.append((first / second, "{} ÷ {}", (first, second)))
            if first_kind in (kind, "") and first_kind != "时间" and second_kind in ("%", "折"):
                results.append((first * second / 100, "{} × {}%", (first, second)))
                results.append((first * (100 - second) / 100, "{} × (1 − {}%)", (first, second)))
    return results


def fmt(number):
    return plain_number(round(number, 4))


def formula(template, numbers):
    """("{} × {}", (39.0, 2.0)) -> "39 × 2"；钟点已经是写好的文字。"""
    return template.format(*(fmt(number) if isinstance(number, float) else number for number in numbers))


def computed(value, kind, operands):
    return any(abs(value - result) < 0.01 for result, _, _ in one_step_results(operands, kind))


def nearest_computation(value, kind, operands):
    """和草稿写的数最接近的一步算式，例如 "39 × 2 = 78"；差得太远（超过一半）就不猜，返回 None。"""
    results = [(abs(value - result), result, template, numbers)
               for result, template, numbers in one_step_results(operands, kind) if result > 0]
    if not results:
        return None
    distance, result, template, numbers = min(results, key=lambda item: item[0])   # 一样近的，取草稿里先写的那种算法
    return f"{formula(template, numbers)} = {fmt(result)}" if distance <= value / 2 else None


# 意思相反的说法：否定词（核心的 NEGATIVE，先去掉 NOT_NEGATIVE）管着后面的话，见 negated
NEGATION_REACH = 6   # 否定词只管它后面 6 个字以内的说法：“未使用的套餐可全额退款”里的“未”不管“全额”
# 条件词，按类别。同一组里的类别互相排斥：草稿用了一类、对应的原文分句用的是同组的另一类，意思就变了。
# “以内”一类也包括“之前”（7 天内、到期前），“以上”一类也包括“之后”（超过 7 天、7 天后）：退款、退票规则里它们正好相反
CONDITIONS = {"以内": "不超过|不多于|不高于|不足|未满|不到|以下|以内|之内|至多|最多|最高|低于|少于|小于|之前|以前",
              "以上": "不少于|不低于|超过|多于|高于|以上|至少|最少|大于|之后|以后|逾期|过后",
              "当天": "当天|当日", "次日": "次日|第二天|隔天|翌日",
              "或": "或者|或是|或|任选|任一|之一", "并且": "并且|(?<![而并])且|同时满足|均需|均须",
              "每天": "每天|每日", "每周": "每周|每星期", "每月": "每月|每个月", "每年": "每年|每个年度"}
AFTER_UNIT = {"内": "以内", "前": "以内", "后": "以上"}   # 只在单位后面才算：“7 天内”“24 小时前”“30 天后”
# 原文分句里限定范围的话：“仅限新用户”“前 2 小时”
SCOPE = r"(?:仅限?|只有|只限|首次|首单|部分)([^\W_]{2,4})|(前\s*(?:\d+|[一二两三四五六七八九十]+)\s*个?(?:小时|天|次|名|位|单|月|年|分钟|周|晚))"


def flipped_condition(sentence, cited, context):
    """条件词换成了相反的（以上/以内、之前/之后、当天/次日、或/并且、每天/每周……）：和原文里说同一件事的分句比，
    原文用的是同组另一类、又没有一个同样像的分句用草稿这一类，才指出。"""
    problems = []
    for clause in sentence.clauses:
        if clause.original is None:
            continue
        for word, other in changed_conditions(clause.text, clause.original.text):
            if not any(word_class(word) in conditions(candidate.text) for candidate in clause.similar):
                problems.append(f"条件变了（原文是“{other}”，草稿写成“{word}”）：{both(clause)}")
    return problems


def flipped_polarity(sentence, cited, context):
    """同一个说法，一边有否定词管着、另一边没有（“从不自动发送”对“会自动发送”，“不予退款”对“可以退款”）。
    先和引用的片段全文比；同一个片段里可以和不可以都有时（退款、折扣规则常见），再和对应的原文分句比。"""
    problems = []
    mine = negated(sentence.text)
    for words, phrase, next_char in context.source_negations:
        plain = plainly_said(sentence.text, phrase, next_char)
        if plain and phrase not in {p for _, p, _ in mine} and not plainly_said(context.source, phrase):
            problems.append(f"意思可能说反了：原文是「{words}」，草稿写成「{plain}」")
    for words, phrase, next_char in mine:
        plain = plainly_said(context.source, phrase, next_char)
        if plain and phrase not in {p for _, p, _ in context.source_negations} and not plainly_said(sentence.text, phrase):
            problems.append(f"意思可能说反了：原文是「{plain}」，草稿写成「{words}」")
    for clause in sentence.clauses:
        if clause.original is None:
            continue
        original, theirs = clause.original.text, {p for c in clause.similar for _, p, _ in negated(c.text)}
        for words, phrase, _ in negated(clause.text):
            plain = plainly_said(original, phrase)
            if plain and phrase not in theirs:
                problems.append(f"意思可能说反了：原文是「{plain}」，草稿写成「{words}」")
        for words, phrase, _ in negated(original):
            plain = plainly_said(clause.text, phrase)
            if plain and phrase not in {p for _, p, _ in negated(clause.text)} and \
                    not any(plainly_said(c.text, phrase) for c in clause.similar):
                problems.append(f"意思可能说反了：原文是「{words}」，草稿写成「{plain}」")
    return problems


def swapped_role(sentence, cited, context):
    """谁来承担、谁来办换了人：草稿“由顾客承担”，说同一件事的原文分句是“由商家承担”。"""
    problems = []
    for clause in sentence.clauses:
        for verb, who in roles(clause.text).items():
            theirs = [(c, roles(c.text)[verb]) for c in clause.similar if verb in roles(c.text)]
            if theirs and all(not same_party(who, other) and (who == "客户" or who not in c.text) for c, other in theirs):
                problems.append(f"由谁{verb}变了：原文是「由{theirs[0][1]}{verb}」，草稿写成「由{who}{verb}」")
    return problems


def dropped_limit(sentence, cited, context):
    """丢了原文的限定：原文说“但…除外”“仅限…”“前 2 小时”（在对应的那一句；片段里没有草稿的全称词时，片段的别处也算），
    草稿整句没有任何限定，却说“一律”“全部”“都”，或者把原文分句里的“前 N 小时”“部分”“仅”直接去掉
    （前 2 小时免费 → 停车免费）。"""
    problems = []
    if re.search(LIMITER, sentence.text):
        return []
    for clause in sentence.clauses:
        if clause.original is None:
            continue
        universal = re.search(UNIVERSAL, sentence.text)
        limit = re.search(LIMITER + "|" + CONDITION_LIMIT, clause.original.sentence)
        if universal and not limit and universal.group() not in context.source:   # 限定写在片段的另一句里
            limit = re.search(LIMITER + "|" + CONDITION_LIMIT, context.source)
        if limit and universal and universal.group() not in clause.original.sentence:
            problems.append(f"原文有限定「{limit.group()}」，草稿却说「{universal.group()}」：{both(clause)}")
        scope = re.search(SCOPE, clause.original.text)
        if not universal and scope and not kept(scope, sentence):
            problems.append(f"原文这一句有限定「{scope.group()}」，草稿没有：{both(clause)}")
    return problems


def kept(scope, sentence):
    """原文的限定在草稿这句里还在不在：“仅限新用户”要有“新用户”，“前 2 小时”要有 2 小时这个数。"""
    if scope.group(1):
        return scope.group(1) in sentence.text
    wanted = [value for _, value, _ in quantities_in(scope.group(2))]
    return any(value in wanted for clause in sentence.clauses for _, value, _ in clause.quantities)


def moved_number(sentence, cited, context):
    """数字挪到了另一档：草稿“单人 299 元”，原文说同一件事的分句是“单人 199 元”（299 是双人的价钱）。
    这个值片段里有（所以数量检查不报），可最像的原文分句里是同一种单位的另一个值。"""
    problems = []
    for clause in sentence.clauses:
        for kind, value, shown in clause.quantities:
            if kind in ("", "日期", "时间", "星期") or not found_in(context.known, kind, value) or \
                    any(found_in(c.quantities, kind, value) for c in clause.closest):
                continue
            rivals = [c for c in clause.closest if any(q[0] == kind for q in c.quantities)]
            holders = [c for c in context.clauses if found_in(c.quantities, kind, value)]
            if rivals and not any(more_like(clause, holder, rivals[0], value) for holder in holders):
                other = next(q for q in rivals[0].quantities if q[0] == kind)
                problems.append(f"数量「{shown}」在原文对应的那一句里是「{other[2]}」：{both(clause)}")
    return problems


def unsupported_clause(sentence, cited, context):
    """整句有依据，逗号后面却追加了一个片段里没有的分句（“……7 天，须提前一天预约”）：分句里说事实的字
    （客套话、引文、数字和虚字不算）有 NEW_CHARS 个以上、而且一大半在引用的片段和问题里都没出现过。"""
    if len(sentence.pairs) >= MIN_BIGRAMS and len(sentence.pairs & context.supporting_pairs) < SUPPORT_THRESHOLD * len(sentence.pairs):
        return []   # 整句都没有依据：unsupported_sentence 已经指出了
    problems = []
    for clause in sentence.clauses:
        if re.search(QUOTE, clause.text):   # 引文由 altered_quote 核对，引出它的话不是事实
            continue
        text = re.sub(COURTESY + "|" + REASONING, " ", clause.text)
        text = re.sub("|".join((DATE, CLOCK, HOUR)), " ", text).casefold()
        content = [char for char in re.findall(r"[^\W\d_]", text) if char not in FUNCTION_CHARS]
        new = [char for char in content if char not in context.seen]
        if len(new) >= NEW_CHARS and len(new) * 2 > len(content):
            problems.append(f"这个分句在引用的片段里找不到依据：「{one_line(clause.text, 31)}」")
    return problems


def swapped_clauses(sentence, cited, context):
    """同一句里两个分句互换了说法：甲对应原文 A、乙对应原文 B，甲里却有只属于 B 的字、乙里有只属于 A 的字。
    “客服人员只负责写回复草稿……由助手检查”就是把“助手”和“客服人员”对调了。"""
    problems = []
    matched = [clause for clause in sentence.clauses if clause.original is not None]
    for first, second in [(a, b) for index, a in enumerate(matched) for b in matched[index + 1:]]:
        a, b, source_a, source_b = first.pairs, second.pairs, first.original.pairs, second.original.pairs
        if first.original is not second.original and (a & (source_b - source_a)) - b and (b & (source_a - source_b)) - a:
            problems.append(f"两处说法可能对调了：草稿「{one_line(first.text, 21)}」「{one_line(second.text, 21)}」，"
                            f"原文「{one_line(first.original.text, 21)}」「{one_line(second.original.text, 21)}」")
    return problems


def more_like(clause, holder, rival, moved):
    """草稿分句是不是其实在说 holder（含这个值的原文分句）而不是 rival：它别的数量和 holder 对得上的更多，
    或者它有 holder 独有的词、又没有 rival 独有的词。"""
    def matching(other):   # 这个值以外的数量
        return sum(found_in(other.quantities, kind, value) for kind, value, _ in clause.quantities if value != moved)
    if matching(holder) > matching(rival):
        return True
    return bool(clause.masked & (holder.masked - rival.masked)) and not clause.masked & (rival.masked - holder.masked)


def both(clause):
    return f"草稿「{one_line(clause.text.strip('「」『』“” '), 31)}」，原文「{one_line(clause.original.text, 31)}」"


@functools.lru_cache(maxsize=4096)   # 每个草稿分句都要和每个像它的原文分句比：同一段文字只找一次
def negated(text):
    """否定词管着的说法：((否定词在内的原文写法, 后面的两个字, 再后面的一个字), …)。
    “从不自动发送” -> (("从不自动", "自动", "发"),)。条件词（“不超过”）和“不同”“无论”这类不表示否定的词先换成空格。"""
    text = without_false_negations(text)
    found = []
    for match in re.finditer(NEGATIVE, text):
        after = re.match(r"([^\W\d_]{2})([^\W\d_]?)", text[match.end():])
        if after:
            found.append((text[match.start():match.end() + 2], after.group(1), after.group(2).strip("了吗呢吧啊呀哦嘛")))
    return tuple(found)


def without_false_negations(text):
    """把“不超过”这类带否定字的条件词，和“不同”“无论”这类看着像否定、其实不是的词，换成等长的空格（位置不变）。"""
    return re.sub(NOT_NEGATIVE, lambda m: " " * len(m.group()), text)


def plainly_said(text, phrase, next_char=None):
    """phrase 在 text 里有没有不带否定的说法：同一个分句里、它前面没有否定词；给了 next_char 时，它后面紧跟的字也要是
    next_char（说的是同一样东西）。返回那一处连同前面的助动词的写法（“会自动”），没有就是 None。"""
    cleaned = without_false_negations(text)
    for match in re.finditer(re.escape(phrase), text):
        if cleaned[match.start():match.end()] != phrase:   # 在“不超过”这类条件词里面，不算
            continue
        reach = max(match.start() - NEGATION_REACH, 0)   # 否定词只管后面 NEGATION_REACH 个字，而且不跨分句
        clause_start = max([reach + m.end() for m in re.finditer(CLAUSE_BREAK, text[reach:match.start()])] + [reach])
        following = re.match(r"[^\W\d_]?", text[match.end():]).group().strip("了吗呢吧啊呀哦嘛")   # 语气词不算
        if not re.search(NEGATIVE, cleaned[clause_start:match.start()]) and next_char in (None, following):
            # 给人看的写法：说法连同紧挨在前面的助动词（“会自动”“能使用”“可以开通”），不从一个词的中间截开（“手会自动”）
            modal = re.search(r"(?:可以|能够|需要|允许|支持|可|能|会|要|须|予)$", text[max(0, match.start() - 2):match.start()])
            return (modal.group() if modal else "") + text[match.start():match.end()].strip()
    return None


def conditions(text):
    """文字里用到的条件词：{"以上": "超过", …}（类别 -> 原文写法）。所有条件词按长短排好一起找，长的先认：
    “不少于”是“以上”一类，不会被认成里面的“少于”；单位后面的“内、前、后”也算（见 AFTER_UNIT）。"""
    words = sorted((word for group in CONDITIONS.values() for word in group.split("|")), key=len, reverse=True)
    found = {}
    for match in re.finditer("|".join(words) + r"|(?<=[天日时月年周次晚])[内前后]", text):
        found.setdefault(word_class(match.group()), match.group())
    return found


def word_class(word):
    """条件词属于哪一类：“超过” -> "以上"，“内” -> "以内"。"""
    return AFTER_UNIT.get(word) or next(name for name, group in CONDITIONS.items() if re.fullmatch(group, word))


def changed_conditions(clause, original):
    """草稿用了某一类条件词，原文用的是同组的另一类、没有这一类：[(草稿的写法, 原文的写法)]。"""
    mine, theirs = conditions(clause), conditions(original)
    changed = []
    for name, word in mine.items():
        others = [other for group in EXCLUSIVE if name in group for other in group - {name} if other in theirs]
        if others and name not in theirs:
            changed.append((word, theirs[others[0]]))
    return changed


def roles(text):
    """{动作: 由谁}：“运费由商家承担” -> {"承担": "商家"}；“由您自行支付” -> {"支付": "客户"}（称呼客户的词都算客户）。"""
    return {verb: "客户" if re.fullmatch(CUSTOMER, who) else who.replace("的", "") for who, verb in re.findall(ROLE, text)}


def same_party(mine, theirs):
    """是不是同一方：一样，一个包含另一个（会员本人、会员），或者一边是客户、另一边是一个人（业主、借用人、住户……
    以“人、者、主、户、员、客、方”结尾：草稿对客户说“由您承担”）。"""
    other = mine if theirs == "客户" else theirs if mine == "客户" else ""
    return mine in theirs or theirs in mine or bool(re.search("[人者主户员客方]$", other))


# 规则表的其余各行（核心的四条登记在核心末尾）。measured 由 python3 checks/grounding_eval.py --rules 量出
# （标注集 grounding_cases.json、盲测集 grounding_holdout.json）；checks/test_grounding.py 核对这里写的数和实测相同。
RULES += [
    # 写了 evidence 的回答：依据的覆盖、算出来的数、claim 和自己的引文再比几样
    # 级别是约定：依据的约定要求每句事实都有依据，缺了就是回答没守约定，要人看（实测见 measured，不到 RELIABLE）
    Rule(no_evidence, "没给依据的分句里有依据撑不住的数量、条件、由谁来做", "“超过 30 天自动续费”没有 evidence", (53, 17, 39, 9),
         policy="needs_review"),
    Rule(restated_without_evidence, "没给依据、也没有新数量和条件的分句", "“到期后自动续费”没有 evidence", (124, 90, 78, 63), policy="hint"),
    Rule(opposite_in_part, "claim 的分句和引文对应的分句一个肯定一个否定", "香烟可以报销（引文：但酒水、香烟不予报销）", (4, 1, 2, 0)),
    Rule(antonym_of_quote, "claim 用了引文里那个词的反义词", "热水按次收费（引文：热水免费）", (1, 1, 0, 0)),
    Rule(condition_unlike_quote, "claim 的条件词和引文相反", "7 天后可以退款（引文 7 天内）", (23, 1, 9, 1)),
    Rule(role_unlike_quote, "claim 里谁来承担换了", "由商家承担（引文由顾客承担）", (12, 1, 2, 0)),
    Rule(wider_than_quote, "claim 说一律，原文有限定", "所有镜片都打 9 折（原文：但渐进片除外）", (15, 1, 5, 0)),
    Rule(dropped_exception, "引文停在了例外前面", "quote 到“享 9 折”为止，原文接着“但…除外”", (19, 6, 5, 0)),
    Rule(contact_unlike_quote, "claim 的链接、电话和引文不同", "400-820-1235（引文 400-820-1234）", (18, 1, 2, 0)),
    Rule(term_from_elsewhere, "claim 用了另一档的词", "银卡享 85 折（引文：金卡享 85 折）", (29, 9, 6, 4)),
    Rule(clause_unlike_quote, "claim 的分句和引文说的不像同一件事", "…，并且赠送一次清洗（引文只说价钱）", (68, 55, 26, 9)),
    # 没写 evidence 的回答：逐句猜出处
    Rule(guessing(unsupported_number), "数字、单位、日期时间、算错的数", "试用 30 天（原文 7 天）", (224, 18, 27, 6)),
    Rule(guessing(changed_link), "改过或编出来的链接", "help.example.com/trial（原文 …/trial-terms）", (49, 0, 6, 0)),
    Rule(guessing(altered_quote), "引号里改过的原文", "“从不主动发送”（原文“从不自动发送”）", (4, 0, 0, 0)),
    Rule(guessing(unsupported_sentence), "编出来的句子、出处写错", "到期后会自动转成付费的正式版", (47, 11, 4, 1)),
    Rule(guessing(flipped_condition), "条件词反了", "超过 15 天可以退款（原文 15 天内）", (58, 1, 4, 0)),
    Rule(guessing(flipped_polarity), "说反了（可以↔不予）", "15 天内不能申请退款（原文可以）", (46, 8, 3, 1)),
    Rule(guessing(swapped_role), "谁来承担、谁来办换了", "运费由顾客承担（原文由商家承担）", (5, 0, 0, 0)),
    Rule(guessing(dropped_limit), "丢了例外或限定、说得过宽", "一律可以退款（原文：但定制商品除外）", (23, 5, 7, 2)),
    Rule(guessing(moved_number), "数字挪到另一档", "单人 299 元（原文单人 199 元、双人 299 元）", (48, 11, 5, 4)),
    Rule(guessing(unsupported_clause), "整句有依据，却追加了一个分句", "试用 7 天，须提前一天预约", (61, 23, 6, 10)),
    Rule(guessing(swapped_clauses), "两个分句的说法对调", "客服人员写草稿……由助手检查", (30, 0, 1, 0)),
]


def mark_grounding(result, hits, library=None):
    """格式检查通过之后：列出没被引用的命中片段（只是信息），再核对草稿的出处。有问题就把 status 改成
    needs_review（退出码 1）；正文里写了没发送的编号，就像硬规则一样拒绝（抛出 NoAnswer）。返回退出码。
    library 是资料库里全部的编号：正文里写了其中没发送的，哪怕是 missing 的说明，也拒绝。"""
    result["uncited_hits"] = [hit["id"] for hit in hits if hit["id"] not in result["sources"]]
    if result["status"] != "draft":   # missing 的说明不核对出处，可写了没发送的编号照样拒绝
        refused = unsent_id(Sentence(result["draft"] or ""), [], Context("", hits, result["question"], None, library))
        if refused:
            raise make_rejection(*refused)
        return EXIT_OK
    verdict = check_grounding(result["draft"], result["sources"], hits, result["question"], result.get("evidence"), library)
    if verdict["status"] == "rejected":
        raise make_rejection(*verdict["problems"])
    result["hints"] = verdict["hints"]
    if verdict["status"] == "draft":
        checked = "每条依据的引文都在片段里，每句话和自己的引文对得上" if result.get("evidence") is not None else \
            "数量、链接、引文和句子都能在引用的片段里找到"
        print(f"核对出处：{checked}，没有发现说反的地方。" if not verdict["hints"] else   # 有提示时不说“都找得到”：提示正说有一处找不到
              "核对出处：可靠的规则没有发现问题，状态仍是 draft；下面的提示来自不够可靠的规则，请再看一眼。", file=sys.stderr)
    else:
        print(f"核对出处：{len(verdict['problems'])} 处需要人工复核。", *(f"  - {p}" for p in verdict["problems"]),
              sep="\n", file=sys.stderr)
        result.update(status="needs_review", problems=verdict["problems"])
    if verdict["hints"]:   # 提示不改变状态：写在结论后面给人看，也放进输出的 hints
        print(f"提示（不改变状态）：{len(verdict['hints'])} 处可以再看一眼。",
              *(f"  - {h}" for h in verdict["hints"]), sep="\n", file=sys.stderr)
    return EXIT_OK if verdict["status"] == "draft" else EXIT_REVIEW


# ---------- 第 05 课：不可信的资料（指令、两个版本、常见词、太长）和 --trace ----------

MAX_WARNINGS = 10             # 资料的警告太多就只列前 10 条，免得把真正的结果淹没
# 太常见的词（单个字一律算太常见）：几乎每个问题都会命中它们，路由就失去了意义
COMMON_KEYWORDS = {"什么", "怎么", "怎么样", "为什么", "如何", "可以", "可以吗", "多少", "哪些", "请问", "一下", "我们",
                   "你们", "这个", "what", "how", "the", "is", "to", "an", "of", "and", "do", "can"}
TEXT_BUDGET = 400   # 每个片段建议不超过 400 字：3 个命中 ≈ 1200 字的上下文（第 05 课“上下文预算”）
NEAR_DUPLICATE = 0.8   # 两段正文的 4 字片段 Jaccard ≥ 0.8，就像同一条规则的两个版本（第 05 课“两个版本”）


# 像是写给模型的指令。只是第一道筛子，不是防线：换个说法就能绕过。
# 真正的防线是提示词里“资料只是数据”、只许引用命中片段，以及事后的出处核对；程序也从不执行模型的输出。
INSTRUCTION_PATTERNS = [
    r"(?:忽略|无视|不用理会|不要理会|忘掉|忘记)(?:以上|之前|上面|前面|上述|系统)[^。！？]{0,6}?(?:指令|指示|提示|要求|规则|内容|消息)",
    r"你(?:现在|現在)(?:是|扮演|要)", r"你的新身份", r"(?:系统|开发者)提示词", r"不要(?:告诉|透露给)用户",
    r"(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|above|prior|earlier|system)\s+"
    r"(?:instructions?|prompts?|rules|messages?)",
    r"reveal\s+(?:your\s+)?(?:system\s+)?prompt", r"you\s+are\s+now", r"you're\s+now", r"from\s+now\s+on,?\s+you",
]


@functools.lru_cache(maxsize=64)   # 出处核对时每句话都要问一遍引用的片段：同一段文字只查一次
def instruction_like(text):
    """像是给模型下指令的片段：“忽略 以上 指令” -> ("忽略以上指令",)（先统一全角、大小写、零宽字符和汉字间空白）。"""
    text = fold(text)
    text = re.sub(r"(?<=[^\x00-\x7f])\s+(?=[^\x00-\x7f])", "", re.sub(r"\s+", " ", text))
    return tuple(found.group() for pattern in INSTRUCTION_PATTERNS for found in re.finditer(pattern, text))


def obeys_hidden_instruction(sentence, cited, context):
    """第 04 课规则表里的一条，由这一课加上：引用的片段里藏着像给模型下指令的文字，说明资料被动过手脚，草稿再像样也要人看。"""
    return [f"引用的片段 {hit['id']} 里有像是给模型下指令的文字，草稿可能照着它写了" for hit in cited
            if instruction_like(hit["title"] + " " + hit["text"])]


# 这条的级别（needs_review）是约定，不是实测：标注集和盲测集里没有藏着指令的片段（实测是 0, 0, 0, 0，量不出可靠不可靠）。
RULES.append(Rule(obeys_hidden_instruction, "引用的片段里藏着指令", "片段里写着“忽略之前的指令”", (0, 0, 0, 0),
                  policy="needs_review"))


def shingles(text, size=4):
    """4 字片段：去掉空白标点、数字记作 # 后每 4 字一片。“试用期 7 天”→{“试用期#”, “用期#天”}。
    只差数字的两段话片段相同，正好能认出“同一条规则的两个版本”。"""
    text = fold(re.sub(r"[\W_]+|(\d+(?:\.\d+)?)", lambda m: "#" if m.group(1) else "", text))
    return {text[i:i + size] for i in range(max(1, len(text) - size + 1))}


def near_duplicates(texts, threshold):
    """返回 {(i, j): Jaccard 相似度}，只含 ≥ threshold 的对（i < j）。Jaccard = 共有的片段数 ÷ 两边合起来的片段数。
    不把每两条都拿来比：先记下每个片段出现在哪几条记录里（和检索用的“词 → 记录”是同一种索引），
    再数每一对记录共有多少片段；一个片段都不共有的两条（绝大多数）根本不会被数到。
    结果和两两比较完全一样，只是快（bench.py 量读 100 条几乎一样的记录），而每次运行都要做这一步。"""
    prints = [shingles(text) for text in texts]
    holders = {}   # 片段 -> 含有它的记录编号（从小到大）
    for index, pieces in enumerate(prints):
        for piece in pieces:
            holders.setdefault(piece, []).append(index)
    shared = {}   # (i, j) -> 两条记录共有的片段数
    for indexes in holders.values():
        for position, j in enumerate(indexes):
            for i in indexes[:position]:
                shared[i, j] = shared.get((i, j), 0) + 1
    found = {}
    for (i, j), count in shared.items():
        similar = count / (len(prints[i]) + len(prints[j]) - count)
        if similar >= threshold:
            found[i, j] = similar
    return found


def document_warnings(records):
    """返回警告列表：像指令的文字、像同一规则的两个版本、太常见的关键词、太长的正文。"""
    warnings = []
    for number, record in enumerate(records, start=1):
        label = f"第 {number} 条记录（id {json.dumps(record['id'], ensure_ascii=False)}）"
        for field in ("title", "text"):
            for phrase in instruction_like(record[field]):
                warnings.append(f"{label}的 {field} 里有像是给模型下指令的文字「{phrase}」；程序不会照它做事，"
                                "但模型可能听从它，所以引用这一条的草稿一律要人工复核")
        for keyword in record["keywords"]:
            problem = keyword_problem(keyword)
            if problem:
                warnings.append(f"{label}的关键词「{keyword}」{problem}")
        if len(record["text"]) > TEXT_BUDGET:
            warnings.append(f"{label}的正文有 {len(record['text'])} 个字，超过每个片段 {TEXT_BUDGET} 字的建议上限，"
                            "请切成几个片段")
    return warnings + version_warnings(records)


def keyword_problem(keyword):
    """一个关键词的毛病（接在“关键词「…」”后面说），没有时是 None。练习自查（checks/exercise.py）也用它。"""
    if fold(keyword) in COMMON_KEYWORDS or len(fold(keyword)) == 1:
        return "太常见或只有一个字，很容易命中不相干的问题"
    if any(mark in fold(keyword) for mark in ",、/;"):   # fold 之后全角的，；／也是这几个
        return "里有分隔符：一个关键词只能是一个词，请拆开写"
    return None


def version_warnings(records):
    """两条记录正文几乎相同，或标题相同而数字不同：像是同一条规则的两个版本。每条记录只报一次。"""
    similar = near_duplicates([record["text"] for record in records], NEAR_DUPLICATE)
    titles = {}
    for index, record in enumerate(records):
        titles.setdefault(fold(record["title"]), []).append(index)
    pairs = set(similar) | {(i, j) for group in titles.values() for i in group for j in group if i < j}
    warnings, reported = [], set()
    numbers = {index: numbers_in(records[index]["text"]) for index in {i for pair in pairs for i in pair}}   # 每条只读一次数字
    for first, second in sorted(pairs, key=lambda pair: (pair[1], pair[0])):
        first_numbers, second_numbers = numbers[first], numbers[second]
        if second in reported or ((first, second) not in similar and first_numbers == second_numbers):
            continue
        why = f"正文几乎相同（相似度 {similar[first, second]:.2f}）" if (first, second) in similar else "标题相同"
        if first_numbers != second_numbers:
            why += f"，数字却不同（{'、'.join(sorted(first_numbers - second_numbers)) or '没有别的数字'} 对 " \
                   f"{'、'.join(sorted(second_numbers - first_numbers)) or '没有别的数字'}）"
        warnings.append(f"第 {first + 1} 条（id \"{records[first]['id']}\"）和第 {second + 1} 条（id \"{records[second]['id']}\"）"
                        f"{why}，像是同一条规则的两个版本；请只保留正确的那一条，不要指望模型替你选")
        reported.add(second)
    return warnings


def print_warnings(warnings, shown):
    more = [f"还有 {len(warnings) - MAX_WARNINGS} 条类似的警告没有列出"] if len(warnings) > MAX_WARNINGS else []
    for warning in warnings[:MAX_WARNINGS] + more:
        print(f"警告：资料文件 {shown}：{warning}。", file=sys.stderr)


def trace_line(stage, started, detail, ended=None):
    """--trace 的一行：阶段、从 started 到 ended（都是 time.perf_counter() 的读数；ended 省略就是现在）的耗时、计数。
    调用方只传 id、数量和短摘要。"""
    print(f"[trace] {stage}  {((ended or time.perf_counter()) - started) * 1000:.1f} ms  {detail}", file=sys.stderr)


# ---------- 命令行：各课的步骤在 run() 里汇合 ----------

USAGE = ("用法：python3 retrieval_qa.py [问题] [--retrieve-only | --check-draft 文件] [--documents PATH | --web "
         "[--domains 名单.json] [--html 网页.html]] [--timeout 秒] [--trace]；详见 --help。")
NOTES = {
    "retrieved": "只做了检索（--retrieve-only）：没有调用模型，也没有读取密钥。",
    "no_hits": "没有命中任何片段，所以没有调用模型。零命中不等于资料里没有答案，也可能是问法和关键词对不上。",
    "draft": "这是草稿，不会自动发送；数量、链接、引文和句子都能在引用的片段里找到，发出前仍请人工核对。",
    "draft_with_hints": "这是草稿，不会自动发送；可靠的规则没有发现问题，hints 里的几处请再看一眼，发出前仍请人工核对。",
    "needs_review": "草稿里有和引用片段对不上的地方，见 problems；请人工核对后再决定用不用。草稿不会自动发送。",
    "missing": "模型认为命中的片段回答不了这个问题；draft 是它的说明，没有核对出处，不要当作回复发出。"
               "这不证明资料库里没有答案，先检查检索。",
    "rejected": "回答没有通过检查，已拒绝，不要使用；原因见 problems。",
    "error": "模型调用失败，没有得到回答。",
}


def run(argv):
    args = parse_options(argv, USAGE, flags={"--retrieve-only": "retrieve_only", "--trace": "trace", "--web": "web"},
                         value_options={"--documents": "documents", "--timeout": "timeout",
                                        "--check-draft": "check_draft", "--domains": "domains", "--html": "html"})
    if args["help"]:
        sys.stdout.write(__doc__ + "\n" + ENVIRONMENT_HELP)   # 模块说明就是 --help 的内容
        return EXIT_OK
    if args["retrieve_only"] and args["check_draft"] is not None:
        raise make_kit_error(f"--retrieve-only 和 --check-draft 不能同时使用。{USAGE}")
    if args["web"] and args["documents"] is not None or not args["web"] and (args["domains"] or args["html"]):
        raise make_kit_error(f"--web 用联网搜索代替资料文件：--documents 不能和它一起用，--domains、--html 只能和它一起用。{USAGE}")
    timeout = parse_timeout(args["timeout"])
    trace = trace_line if args["trace"] else (lambda *unused: None)   # 不加 --trace 时什么也不打印
    if args["web"]:   # 第 07 课：资料来自联网搜索，编好号的来源当作命中的片段
        policy = read_domains(args["domains"])   # 和第 03 课先读资料一样：名单写错了，在问问题、搜索之前就说
        question = checked_question(args["question"] if args["question"] is not None else ask_question())
        try:
            hits, sources, dropped, stale = web_hits(question, policy, instruction_like, trace,
                                                     timeout if args["timeout"] is not None else None)
        except NoAnswer as failure:   # 搜索失败、也没有缓存：照样输出一个 JSON，和模型调用失败一样
            print(failure, file=sys.stderr)
            write_json({"question": question, "status": "error", "model_called": False, "hits": [], "problems": failure.problems,
                        "note": "联网搜索失败，没有来源，所以没有调用模型，也没有读取模型的密钥。"})
            return failure.exit_code
        documents = hits
        show_sources(sources, dropped, stale)
    else:   # 第 03 课：读资料、检索
        path, started = args["documents"] or DOCUMENTS_PATH, time.perf_counter()
        documents, size = read_and_check(path)
        trace("资料", started, f"{len(documents)} 条记录，{size} 字节")
        question = checked_question(args["question"] if args["question"] is not None else ask_question())
        started = time.perf_counter()
        hits = retrieve(question, documents)
        trace("检索", started, "；".join(f"{h['id']}（{'、'.join(one_line(k, 21) for k in h['matched'])}）" for h in hits) or "零命中")
        show_hits(hits)
    result = {"question": question, "status": "retrieved" if hits else "no_hits", "model_called": False, "hits": hits}
    if args["web"]:   # 每条来源给人看的样子：编号、标题、网址、日期、摘录；去掉了哪些、为什么
        result["hits"] = [{key: source[key] for key in ("n", "title", "url", "published", "snippet")} for source in sources]
        result["dropped"] = [{"title": item["title"], "url": item["url"], "reason": reason} for item, reason in dropped]
        result["cached_seconds_ago"] = None if stale is None else round(stale)   # 搜索失败时用了几秒前的缓存
    code = EXIT_OK
    if not args["retrieve_only"]:
        result.update(draft=None, sources=[], evidence=None, uncited_hits=[], problems=[], hints=[])
    if not args["retrieve_only"] and hits:   # 零命中：不读密钥，不发请求，也不检查保存的回答
        started = time.perf_counter()
        materials = build_materials(hits)
        trace("上下文", started, f"{len(materials)} 个片段，{sum(len(m['title']) + len(m['text']) for m in materials)} 字")
        try:
            if args["check_draft"] is not None:   # 第 02 课的 --check-draft：保存的回答代替模型的回答
                answer = checked_answer(read_saved_reply(args["check_draft"]), [m["id"] for m in materials])
            else:   # 第 02 课的整条路，只是资料换成了命中的片段
                answer = ask_model(question, materials, timeout, trace, WEB_RULES if args["web"] else "")
                result["model_called"] = True
            if args["web"] and citation_problems(answer, sources):   # 第 07 课：[6] 和没发送的片段一样拒绝
                raise make_rejection(*citation_problems(answer, sources), raw=answer["draft"])
            result.update(answer)
            started = time.perf_counter()
            code = mark_grounding(result, hits, [document["id"] for document in documents])   # 第 04 课
        except NoAnswer as failure:
            started = time.perf_counter()
            print(failure, file=sys.stderr)
            result.update(status=failure.status, problems=failure.problems, draft=None, sources=[], evidence=None,
                          uncited_hits=[], hints=[])
            result["model_called"] = failure.model_called and args["check_draft"] is None   # 检查保存的回答时没有请求模型
            code = failure.exit_code
        first = f"：{one_line(result['problems'][0], 41)}" if result["problems"] else ""
        trace("核对", started, f"{result['status']}，{len(result['problems'])} 个问题{first}")
    result["note"] = NOTES["draft_with_hints" if result["status"] == "draft" and result.get("hints") else result["status"]]
    if result["status"] == "error" and not result["model_called"]:
        result["note"] = "没有调用模型：请求还没有发出就停下了，原因见 problems。"
    if args["web"] and result["status"] == "no_hits":
        result["note"] = "联网搜索没有找到可用的来源（搜到了却都被去掉的，原因在 dropped 里），所以没有调用模型，也没有读取模型的密钥。"
    if args["web"] and result["status"] == "retrieved":
        result["note"] = "只做了联网检索（--retrieve-only）：没有调用模型，也没有读取模型的密钥。"
    if args["web"] and not args["retrieve_only"]:   # 真正引用了的来源，可以直接显示成链接
        result["cited"] = cited_sources(result, sources) if result["status"] in ("draft", "needs_review") else []
        trace("引用", time.perf_counter(), "、".join(f"[{source['n']}]" for source in result["cited"]) or "没有")
    if args["html"]:
        try:
            write_html(args["html"], result)
            print(f"网页已写入 {args['html']}", file=sys.stderr)
        except OSError as error:   # 文件夹不存在、是个文件夹、没有权限：结果照样输出，退出码 5（结果没写全）
            reason = describe_os_error(error, writing=True)
            print(error_line(f"写不了网页 {args['html']}（{reason}）。"), file=sys.stderr)
            code = EXIT_OUTPUT
    write_json(result)
    return code


def main(argv=None):
    shown_safely()   # 写出去的一切都经过 ShownSafely：对终端安全、不带密钥
    return run_cli(run, argv)


if __name__ == "__main__":
    sys.exit(main())
