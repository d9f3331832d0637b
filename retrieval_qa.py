"""资料检索问答：先用人工写的关键词找出命中的资料片段，再决定要不要请模型写草稿。

    $ python retrieval_qa.py --retrieve-only 试用几天？

用法：python retrieval_qa.py [问题] [--retrieve-only | --check-draft 文件] [--documents PATH] [--timeout 秒] [--trace]

按关键词从资料文件里找出和问题相关的片段（最多 3 条）；不加 --retrieve-only 时，只把命中的片段发给模型写草稿，
检查回答的格式和引用，再把草稿的数字、链接、引文、句子和引用的片段对照。stdout 上永远只有一个 JSON 对象；
提示、进度和错误都写到 stderr。命令行约定见 README.md，后面的课程都建立在它上面。

  问题                省略时会在 stderr 上提示“问题：”，再从标准输入读一行
  --retrieve-only     只检索：不调用模型，也不读取密钥
  --check-draft 文件  不调用模型：把文件里保存的回答 {status, draft, sources} 当作模型的回答来检查
  --documents PATH    改用另一个资料文件（默认：脚本旁边的 retrieval_documents.json）
  --timeout 秒        模型请求的总时限（默认 60 秒）；超时不自动重试
  --trace             在 stderr 上逐段报告：资料、检索、上下文、请求、响应、核对（耗时和数量，不含密钥，文字最多 40 字）
  -h, --help          显示这段说明

零命中时不调用模型，也不读取密钥，也不检查 --check-draft 的文件。
退出码：0 正常；1 需要人工复核；2 用法或资料文件错误；3 模型调用失败；4 模型回答被拒绝；130 被 Ctrl-C 中断。
"""


import json
import os
import re
import sys
import time
import unicodedata

from model_reply_assistant import (ENVIRONMENT_HELP, JsonObject, JsonProblem, NoAnswer, ask_model, check_answer,
                                   describe, one_line, os_reason, parse_timeout, read_head, read_json, read_saved_reply)
from reply_assistant import (EXIT_OK, EXIT_REVIEW, ask_question, closest, kit_error, parse_command_line, run_cli,
                             write_json)

HELP = __doc__   # 模块说明就是 --help 的内容

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
CONTROL_CHARACTER = "[\x00-\x1f\x7f-\x9f]"   # Unicode 的控制字符（Cc 类）正好是这两段


def load_documents(path=DOCUMENTS_PATH):
    """读取资料文件并逐条检查；任何一处不合规都停下，不跳过坏记录。可疑但合规的地方在 stderr 上警告（第 05 课）。"""
    shown = os.path.basename(path) if path == DOCUMENTS_PATH else path
    text = decode_documents(read_document_bytes(path, shown), shown)
    data = parse_json(text, shown)
    check_records(data, shown)
    print_warnings(document_warnings(data), shown)   # 合规但可疑的地方只警告：第 05 课（见本文件第 05 课那一节）
    return data


def nfkc(text):
    """NFKC 规范化：全角字母数字变半角（Ａ→A、１→1），数学粗体、圈字母这类“花体”也变回普通字母（𝐀→A、ⓐ→a）。"""
    return unicodedata.normalize("NFKC", text)


def normalize(text):
    """NFKC 把全角字母数字变成半角，casefold 忽略大小写：ＡＢＣ、abc、ABC 视为相同；首尾空白不算。"""
    return nfkc(text).casefold().strip()


def retrieve(question, documents, limit=MAX_HITS):
    """命中词越多越靠前，同分按 id 升序，最多返回 limit 条。"""
    wanted, scored = normalize(question), []
    for record in documents:
        matched = {}
        for keyword in record["keywords"]:
            key = normalize(keyword)
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


def show_hits(hits):
    """给人看的检索结果（stderr）；机器读的 JSON 在 stdout。"""
    print(f"命中 {len(hits)} 个片段：" if hits else "没有命中任何片段。", file=sys.stderr)
    for hit in hits:
        print(f"  {hit['id']}  {hit['title']}  命中词：{'、'.join(hit['matched'])}", file=sys.stderr)   # 读取时已拒绝控制字符


# 第 03 课 · 读资料的细节：每一种写错都要说清楚是哪个文件、哪一行、哪条记录、哪个字段。


def fail(shown, what, hint=None, where=""):
    """所有资料错误共用一种格式：文件、位置、问题、提示。"""
    message = f"资料文件 {shown}{where}：{what}。"
    if hint:
        message += f"提示：{hint}" + ("" if hint.endswith("？") else "。")
    return kit_error(message)


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
        raise fail(shown, "找不到这个文件", hint) from None
    except IsADirectoryError:
        raise fail(shown, "这是一个文件夹，不是 JSON 文件", "用 --documents 指向文件本身") from None
    except OSError as error:
        raise fail(shown, f"无法读取（{os_reason(error)}）") from None
    if len(data) > MAX_FILE_BYTES:
        raise fail(shown, f"超过了 {MAX_FILE_BYTES} 字节（100 KB）的上限",
                   "资料应当是人工切分的短片段")
    return data


def decode_documents(data, shown):
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise fail(shown, "是 UTF-16 或 UTF-32 编码", "在编辑器里选择“UTF-8”重新保存")
    try:
        text = data.decode("utf-8-sig")   # utf-8-sig：Windows 记事本写的 BOM 也接受
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise fail(shown, f"不是 UTF-8 编码（第 {line} 行有无法解码的字节 0x{data[error.start]:02X}）",
                   "可能是用 GBK/ANSI 保存的，请在编辑器里选择“UTF-8”重新保存") from None
    if "\x00" in text:
        raise fail(shown, "含有 NUL 字符，看起来不是文本文件")
    if not text.strip():
        raise fail(shown, "文件是空的", "它应当是一个 JSON 数组：[ {…}, {…} ]")
    return text


class BadConstant:
    """JSON 里出现的 NaN / Infinity：先记下来，检查结构时再指出它在哪条记录。"""

    def __init__(self, name):
        self.name = name


def parse_json(text, shown):
    try:
        # NaN、Infinity 和重复的字段名先记下，检查结构时再指出是哪条记录
        return read_json(text, parse_constant=BadConstant, object_pairs_hook=JsonObject)
    except JsonProblem as problem:
        if problem.line is None:   # 嵌套太深、整数太长：不是手误，是文件本身不对
            raise fail(shown, problem.what, "资料文件只需要一层数组，里面是一条条对象") from None
        raise fail(shown, f"JSON 格式不对，{problem.what}", problem.hint,
                   where=f" 第 {problem.line} 行第 {problem.column} 列") from None


def check_records(data, shown):
    if not isinstance(data, list):
        raise fail(shown, f"最外层应当是 JSON 数组 [ … ]，实际是{describe_value(data)}")
    if not 1 <= len(data) <= MAX_RECORDS:
        raise fail(shown, f"应当有 1–{MAX_RECORDS} 条记录，实际有 {len(data)} 条")
    first_seen, look_alike = {}, {}
    for number, record in enumerate(data, start=1):
        label = check_record(record, number, shown)
        if record["id"] in first_seen:
            raise fail(shown, f"{label}的 id 和第 {first_seen[record['id']]} 条重复",
                       "每条记录的 id 必须唯一")
        folded = normalize(record["id"])   # D01#1、d01#1、Ｄ01＃1 折叠后相同
        if folded in look_alike:
            other = look_alike[folded]
            raise fail(shown, f"{label}的 id 和第 {other} 条的 id {json.dumps(data[other - 1]['id'], ensure_ascii=False)} "
                       "只差大小写、全角半角或首尾空格", "人和模型都容易把它们当成同一个片段，请改成明显不同的 id")
        first_seen[record["id"]], look_alike[folded] = number, number


def check_record(record, number, shown):
    """检查一条记录，返回它的称呼，例如：第 2 条记录（id "D01#2"）。"""
    label = f"第 {number} 条记录"
    if not isinstance(record, dict):
        raise fail(shown, f"{label}应当是对象 {{ … }}，实际是{describe_value(record)}")
    if record.duplicates:   # 只报第一个写了两遍的字段
        key, values = next(iter(record.duplicates.items()))
        written = " 和 ".join(json.dumps(value, ensure_ascii=False) for value in values)
        raise fail(shown, f"{label}里字段 {key} 写了 {len(values)} 次（{written}）",
                   "JSON 只会悄悄保留最后一个值，请删掉多余的")
    if is_text(record.get("id")):
        label += f"（id {json.dumps(record['id'], ensure_ascii=False)}）"
    for field in ("id", "title", "text", "keywords"):
        if field not in record:
            raise fail(shown, f"{label}缺少字段 {field}", misspelt_field(record, field))
    for field in ("id", "title", "text"):
        if not is_text(record[field]):
            raise fail(shown, f"{label}的字段 {field} 应当是非空字符串，实际是{describe_value(record[field])}")
        if has_control_characters(record[field], allowed="\n\t\r" if field == "text" else ""):
            raise fail(shown, f"{label}的字段 {field} 里有控制字符（换行、ESC 之类）",
                       "id 和标题只能是一行普通文字；正文里可以换行，别的控制字符不行")
    keywords = record["keywords"]
    if not isinstance(keywords, list) or not keywords:
        hint = None
        if is_text(keywords):   # "试用, 体验版" 这样的一个字符串，按逗号拆成数组
            words = [w.strip() for w in keywords.replace("，", ",").split(",") if w.strip()]
            hint = "写成 " + json.dumps(words, ensure_ascii=False)
        raise fail(shown, f"{label}的字段 keywords 应当是非空的字符串数组，实际是{describe_value(keywords)}", hint)
    for index, keyword in enumerate(keywords, start=1):
        if not is_text(keyword):
            raise fail(shown, f"{label}的 keywords 第 {index} 项应当是非空字符串，实际是{describe_value(keyword)}")
        if has_control_characters(keyword):
            raise fail(shown, f"{label}的 keywords 第 {index} 项里有控制字符（换行、ESC 之类）")
    for field, value in record.items():
        bad = find_bad_constant(value)
        if bad:
            raise fail(shown, f"{label}的字段 {field} 里有{describe_value(bad)}")
    return label


def is_text(value):   # 非空、而且不全是空白的字符串
    return isinstance(value, str) and value.strip() != ""


def describe_value(value):
    """describe() 再加一种只在资料文件里出现的值：NaN / Infinity。"""
    if isinstance(value, BadConstant):
        return f"非法值 {value.name}（JSON 不允许 NaN 和 Infinity）"
    return describe(value)


def find_bad_constant(value):
    """在任意深的嵌套里找 NaN / Infinity；用栈而不用递归，深层嵌套也不会崩。"""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, BadConstant):
            return item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def has_control_characters(text, allowed=""):
    """换行、ESC（终端的控制序列以它开头）这类控制字符（U+0000–U+001F、U+007F–U+009F）；allowed 里的几个除外。"""
    return any(char not in allowed for char in re.findall(CONTROL_CHARACTER, text))


def misspelt_field(record, field):
    close = closest(field, [key for key in record if key not in ("id", "title", "text", "keywords")])
    return f"这条记录里有 {json.dumps(close, ensure_ascii=False)}，是不是想写 \"{field}\"？" if close else None


# ---------- 第 04 课：核对出处——草稿里的数量、链接、引文、句子能不能在引用的片段里找到 ----------
# 编号合法不等于事实正确。这一节把草稿拆成分句，逐条拿去和引用的片段对照：数量（数字连同单位）、日期和时间、
# 链接、引文，以及每个分句在片段里有没有依据、意思有没有说反。
# 它们只能发现“字面上对不上”的地方，不能证明引用正确：措辞相近的错话会漏过，改写得很远的对话会被误报。
# 30%、8 个二元组、两成、0.85 和一半的来历见第 04 课；都在那一课的标注集上量过（结果在 README 里）。

SUPPORT_THRESHOLD = 0.3    # 句子与片段的字二元组重合度下限：低于它多半是引错了来源（0.35 时口语化的改写误报太多）
MIN_BIGRAMS = 8            # 少于 8 个二元组的句子不做整句检查（如“资料 [2] 提到”）：太短，重合度没有意义
# 草稿里在替客户算账的分句：一共 78 元、790 × 30% = 237 元。只有这样的分句里，算出来的数才不算编造
ARITHMETIC = r"一共|总共|合计|共计|总价|总额|算下来|加起来|[=＝×*+＋]|乘以|加上|减去"
NUMBER_CONTEXT = 0.2       # 数量所在分句与含这个数量的片段至少要有两成二元组相同：防止挪用别处的数字，又不误伤短分句
CLAUSE_MATCH = 0.5         # 分句和原文某个分句的二元组有一半相同，才算“说的是同一件事”，才比较意思是否相反
NEW_CHARS = 4              # 一个分句里有 4 个以上说事实的字是片段里没有的、又占了一大半，就单独指出这个分句
MAX_DRAFT_CHARS = 2000     # 回复草稿不会这么长；更长的不逐句核对，直接交给人（也免得逐句比较耗时过长）
QUOTE_NEAR = 0.85          # 引文相似度 ≥0.85 算“近似”：近似也要人工对照，相似度高不代表没改数字
QUOTE = r"「([^」]+)」|『([^』]+)』|“([^”]+)”"
# 链接：http(s)://…、www.…，以及 evil.example/gift 这样的裸域名（全角字母先转成半角再找）
LINK = r"(?i)(?:https?://|www\.)[!-~]+|[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:/[a-z0-9\-._~/?#=&%+:@]*)?"

# 把文字拆成数量、词元、分句和句子。正则写成字符串，re 第一次用到时编译并缓存。
CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_NUMBER = "[零一二两三四五六七八九十百千万]+"
NUMBER = r"\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"   # 1,000 和 1000、3.5 都是一个数
# 单位和量词，长的写在前面（“个工作日”先于“个”）。等号右边是它算作的单位：7 日和 7 天相同，5 位和 5 名相同
UNITS = {"个工作日": "个工作日", "工作日": "个工作日", "个小时": "小时", "小时": "小时", "分钟": "分钟", "个月": "月",
         "个星期": "周", "星期": "周", "礼拜": "周", "周": "周", "天": "天", "日": "天", "号": "天", "年": "年", "秒": "秒",
         "公斤": "公斤", "千克": "公斤", "kg": "公斤", "克": "克", "公里": "公里", "km": "公里", "厘米": "厘米", "cm": "厘米",
         "毫米": "毫米", "米": "米", "毫升": "毫升", "ml": "毫升", "升": "升", "美元": "美元", "块钱": "元", "块": "元", "元": "元", "%": "%",
         "tb": "TB", "gb": "GB", "g": "GB", "mb": "MB", "核": "核", "席位": "席位", "个": "个", "位": "人", "名": "人",
         "人": "人", "次": "次", "条": "条", "项": "项", "张": "张", "份": "份", "台": "台", "件": "件", "节": "节",
         "家": "家", "倍": "倍", "折": "折", "岁": "岁", "斤": "斤", "期": "期"}
UNIT = r"(?i) *(" + "|".join(sorted(map(re.escape, UNITS), key=len, reverse=True)) + r")(?![a-z])"   # 长的先认
# 一周、一天、一个月……：“一”后面是这些计时、计钱、计重的单位才算数字 1；“一个问题”“一台服务器”里的“一”只是“一个”的意思
ONE_COUNTS = {"周", "天", "月", "年", "小时", "分钟", "秒", "个工作日", "元", "公斤", "公里", "倍"}
WEEKDAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
WEEKDAY = r"(?<![\d零一二两三四五六七八九十])(?<![\d零一二两三四五六七八九十] )(?:周|星期|礼拜)([一二三四五六日天])"   # “2 周一直到”里的不是周一
DATE = r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"
ISO_DATE = r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"   # 2025-01-28、2025/1/28
CLOCK = r"(上午|早上|早晨|中午|下午|傍晚|晚上|夜里|凌晨)?\s*(\d{1,2})\s*[:：]\s*(\d{2})"
HOUR = r"(上午|早上|早晨|中午|下午|傍晚|晚上|夜里|凌晨)?\s*(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*点\s*(半|(\d{1,2})\s*分)?"
TOKEN = r"[a-z0-9]+(?:\.[0-9]+)*|[^\W_]"   # 一个英文词或数字算一个单位，一个汉字算一个单位
SENTENCE_END = r"[。！？!?\n]|\.(?=\s|$)"
# 分句的界线。英文逗号和冒号夹在数字中间时（1,000、7:30）不算
CLAUSE_BREAK = r"[，；;：、。！？!?\n（）()]|,(?!\d{3})|:(?!\d)|并且|而且|另外|此外"
PHRASE_BREAK = r"[，；;：。！？!?\n]|,(?!\d{3})|:(?!\d)"   # 比较意思时只按标点切：“或”“并且”要留在分句里才比得出来
ABBREVIATION = r"(?i)(?:\be\.g|\bi\.e|\betc|\bvs)$"
# 虚字：只管语气和连接，不说事实。比较“这个分句是不是新说法”时不算它们
FUNCTION_CHARS = set("的地得了着过是在也就都会要这那个些您你我们他她它有和或与及而但如果为把被让给对向从到还再又很更最已将可以呢吗吧啊呀哦嘛其该每之所")
# 客套话和推理的连接词（所以、属于……）：不是事实，不拿去和片段对照
COURTESY = (r"您好|你好|请问|抱歉|不好意思|欢迎|感谢|谢谢|祝您|为您|很高兴|如果?还?有(?:其他|任何)?(?:问题|疑问)|"
            r"请您?耐心等待|请您?放心|敬请谅解|给您带来不便|所以|因此|也就是说|属于|符合|范围内|这一档|"
            r"随时(?:联系|咨询)(?:我们)?|希望(?:以上|这些)?(?:信息|回答)?对您有(?:所)?帮助")

# 意思相反的说法：否定词管着后面的话（见 negated）。先去掉看着像否定、其实不是的词
NOT_NEGATION = r"不同|不仅|不论|不管|不断|不错|不久|不过|无论|未来|别的|别人|分别|区别|特别|级别|类别|非常|没问题|没关系|不好意思"
NEGATION = r"从不|从未|并非|不能|不可以|不可|不得|不会|不用|不必|不需要|不予|无需|无须|禁止|严禁|停止|暂停|请勿|切勿|没有|没|未|不|无|别|勿"
# 条件词，按类别。同一组里的类别互相排斥：草稿用了一类、对应的原文用的是同组的另一类，意思就变了
# （长的写在前面：“不少于”先于“少于”）
CONDITIONS = [("以下", "不超过|不多于|不高于|不足|未满|以下|以内|之内|至多|最多|最高|低于|少于|小于"),
              ("以上", "不少于|不低于|超过|多于|高于|以上|至少|最少|大于"),
              ("之前", "之前|以前|提前"), ("之后", "之后|以后|过后|延后"),
              ("当天", "当天|当日"), ("次日", "次日|第二天|隔天|翌日"),
              ("或", "或者|或是|或|任选|任一|之一"), ("并且", "并且|而且|同时|都要|均需|均要|且"),
              ("每天", "每天|每日"), ("每周", "每周|每星期"), ("每月", "每月|每个月"), ("每年", "每年|每个年度")]
NEGATIVE_CONDITIONS = "不超过|不多于|不高于|不足|未满|不少于|不低于"   # 它们说的是界限，不是否定
EXCLUSIVE = [{"以下", "以上"}, {"之前", "之后"}, {"当天", "次日"}, {"或", "并且"}, {"每天", "每周", "每月", "每年"}]


def chinese_number(text):
    """“十四”→14，“两”→2，“一百零五”→105，“一万二千”→12000。"""
    if "万" in text:
        high, _, low = text.partition("万")
        return chinese_number(high or "一") * 10000 + (chinese_number(low) if low else 0)
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
    number = text.replace(",", "")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return str(float(number)) if "." in number else str(int(number))


def unit_after(text, start):
    """text 从 start 起（跳过空格）是不是一个单位：返回 (算作的单位, 单位的结束位置)，不是就返回 (None, start)。
    英文单位后面不能紧跟字母（“GB”是单位，“Good”里的“G”不是）。"""
    match = re.compile(UNIT).match(text, start)
    if not match:
        return None, start
    return UNITS[match.group(1).casefold()], match.end()


def quantities_in(text):
    """草稿或片段里的数量：[(种类, 值, 原文写法)]，先日期、时间、星期，再百分数、中文数字和阿拉伯数字。
    种类是“日期”“时间”“星期”，或数字后面的单位（没有单位是 ""）。
    "试用期 7 天，3 月 1 日 7:30 起" -> [("日期", (None, 3, 1), "3 月 1 日"), ("时间", 450, "7:30"), ("天", "7", "7 天")]
    一样的值写法不同也相同：03 = 3，1,000 = 1000，１４ = 14，七天 = 7 天，一周 = 1 周，百分之二十 = 20%。"""
    text = nfkc(text)
    found = []

    def take(pattern, kind, value_of):   # 找到一种写法就记下，再把它从文字里抹掉，免得里面的数字再算一遍
        nonlocal text
        for match in re.finditer(pattern, text):
            value = value_of(match)
            if value is not None:
                found.append((kind, value, match.group().strip()))
        text = re.sub(pattern, lambda m: " " * len(m.group()), text)

    take(DATE, "日期", lambda m: (int(m.group(1)) if m.group(1) else None, int(m.group(2)), int(m.group(3))))
    take(ISO_DATE, "日期", lambda m: (int(m.group(1)), int(m.group(2)), int(m.group(3))))
    take(CLOCK, "时间", clock_minutes)
    take(HOUR, "时间", clock_minutes)
    for start, end, first, last in weekday_ranges(text):   # 周一至周五：周一到周五每一天都算写过
        found.extend(("星期", day, text[start:end]) for day in range(first, last + 1))
        text = text[:start] + " " * (end - start) + text[end:]
    take(WEEKDAY, "星期", lambda m: WEEKDAYS[m.group(1)])
    take(r"百分之(" + CN_NUMBER + ")", "%", lambda m: str(chinese_number(m.group(1))))
    for start, end, unit, value in chinese_numbers(text):
        found.append((unit, value, text[start:end].strip()))
        text = text[:start] + " " * (end - start) + text[end:]
    for match in re.finditer(NUMBER, text):
        unit, end = unit_after(text, match.end())
        found.append((unit or "", plain_number(match.group()), text[match.start():end].strip()))
    return found


def chinese_numbers(text):
    """“七天”“十四个”“两项”这样带单位的中文数字：[(起, 止, 单位, 值)]。单独的“一”只在计时、计钱、计重的单位前面
    才算（见 ONE_COUNTS），“第一天”这样的序数、“换一天”“某一天”这样的泛指不算。"""
    found = []
    for match in re.finditer(CN_NUMBER, text):
        unit, end = unit_after(text, match.end())
        before = text[match.start() - 1:match.start()]
        if unit is None or before == "第" or (match.group() == "一" and (unit not in ONE_COUNTS or before in "换另某哪这那同")):
            continue
        found.append((match.start(), end, unit, str(chinese_number(match.group()))))
    return found


def clock_text(minutes):
    """1170 -> "19:30"；None -> None。"""
    return None if minutes is None else f"{minutes // 60}:{minutes % 60:02d}"


def clock_minutes(match):
    """“下午 3 点半”“晚上 7:30” -> 从零点算起的分钟（930、1170）；下午、傍晚、晚上的 1–11 点加 12 小时。"""
    part = match.group(1)
    hour = int(match.group(2)) if match.group(2).isdigit() else chinese_number(match.group(2))   # “九点”也是 9 点
    if ":" in match.group() or "：" in match.group():
        minute = int(match.group(3))
    else:
        minute = 30 if match.group(3) == "半" else int(match.group(4) or 0)
    if part in ("下午", "傍晚", "晚上", "夜里") and hour < 12:
        hour += 12
    return hour * 60 + minute if hour <= 24 and minute < 60 else None


def weekday_ranges(text):
    """“周一至周五”“星期一到星期六”：返回 [(起, 止, 第一天, 最后一天)]。"""
    pattern = WEEKDAY + r"\s*(?:至|到|-|－|~|～|—)\s*" + WEEKDAY
    return [(m.start(), m.end(), WEEKDAYS[m.group(1)], WEEKDAYS[m.group(2)]) for m in re.finditer(pattern, text)
            if WEEKDAYS[m.group(1)] <= WEEKDAYS[m.group(2)]]


def numbers_in(text):
    """文本里的数字（不管单位，日期时间不算）：{"7", "12.5%", "3"}。引文里改了数字、第 05 课的“同一规则的两个版本”用它。"""
    return {value + ("%" if kind == "%" else "") for kind, value, _ in quantities_in(text) if isinstance(value, str)}


def tokens(text):
    """比较用的单位：一个英文词或数字一个，一个汉字一个。数字先统一写法（03 → 3、1,000 → 1000、七天 → 7天），
    同一件事换个写法，二元组也相同。"""
    text = re.sub(r"百分之(" + CN_NUMBER + ")", lambda m: f"{chinese_number(m.group(1))}%", nfkc(text))
    text = re.sub(ISO_DATE, lambda m: f"{int(m.group(1))}年{int(m.group(2))}月{int(m.group(3))}日", text)   # 2025-06-18 -> 2025年6月18日
    for pattern in (CLOCK, HOUR):   # “晚上 7 点”“19:00”都写成 19:00
        text = re.sub(pattern, lambda m: clock_text(clock_minutes(m)) or m.group(), text)
    for start, _, _, value in reversed(chinese_numbers(text)):   # 只换中文数字，单位留着
        numeral = re.match(CN_NUMBER, text[start:]).group()
        text = text[:start] + value + text[start + len(numeral):]
    text = re.sub(NUMBER, lambda m: plain_number(m.group()), text)
    return re.findall(TOKEN, text.casefold())


def split_sentences(text):
    """按 。！？!? 和换行切句；英文句点后面要有空白才算句末，所以 3.5、e.g. 不会被切开。"""
    sentences, start = [], 0
    for match in re.finditer(SENTENCE_END, text):
        if match.group() == "." and re.search(ABBREVIATION, text[start:match.start()]):
            continue
        if text[start:match.end()].strip():
            sentences.append(text[start:match.end()].strip())
        start = match.end()
    return sentences + ([text[start:].strip()] if text[start:].strip() else [])


def split_clauses(text):
    """按逗号、分号、顿号、句号和“并且、而且、另外、此外”切成分句。"""
    return [clause.strip() for clause in re.split(CLAUSE_BREAK, text) if clause.strip()]


def strip_markers(text):
    """去掉引用标记和列表序号（[1]、^[2]、①、行首的“1.”），它们不是事实里的数字。"""
    text = re.sub(r"\^?\[\d+\]|[\u2460-\u2473]", " ", text)
    return re.sub(r"(?m)^\s*\d+[.、)）]\s*", "", text)


def bigrams(text):
    units = tokens(text)
    return set(zip(units, units[1:]))


def overlap(pairs, source):
    """一组二元组里，有多大比例也出现在一个片段（标题加正文）里。"""
    return len(pairs & bigrams(source["title"] + " " + source["text"])) / len(pairs)


def check_grounding(draft, sources, hits, question=""):
    """返回问题列表；空列表表示链接、数量、引文、分句都能在引用的片段里找到依据，意思也没有说反。
    question 是用户的问题：草稿复述问题里的话（“部署以后也不会……”）不算新说法。"""
    cited = [hit for source in sources for hit in hits if hit["id"] == source]
    if len(draft) > MAX_DRAFT_CHARS:
        return [f"草稿有 {len(draft)} 个字，超过逐句核对的上限 {MAX_DRAFT_CHARS} 字，请人工复核"]
    for hit in hits:   # 草稿里提到的片段编号、引用标记和列表序号都不算事实
        draft = draft.replace(hit["id"], " ")
    draft = strip_markers(draft)
    # 第 05 课加上的一条（instruction_like 在第 05 课那一节）：引用的片段里藏着指令，草稿再像样也要人看
    suspicious = [f"引用的片段 {hit['id']} 里有像是给模型下指令的文字，草稿可能照着它写了" for hit in cited
                  if instruction_like(hit["title"] + " " + hit["text"])]
    links = check_links(draft, cited)
    draft = re.sub(LINK, " ", draft)   # 链接单独核对，里面的数字不再重复报
    problems = (suspicious + links + check_numbers(draft, cited, question) + check_quotes(draft, cited)
                + check_sentences(draft, cited, hits, question) + check_meaning(draft, cited))
    return list(dict.fromkeys(problems))   # 同一句话、同一段引文重复出现，只报一次


def link_key(link):
    """比较链接用的样子：去掉结尾的标点和斜杠，协议和主机不分大小写；没写协议的只和去掉协议的比。"""
    link = link.rstrip(".,;:!?)]}'\"/")
    scheme, has_scheme, rest = link.partition("://")
    if not has_scheme:
        scheme, rest = "", link
    host, slash, path = rest.partition("/")
    return scheme.casefold(), host.casefold(), slash + path


def check_links(draft, cited):
    """草稿里的链接必须和引用的片段里的某个链接完全相同（协议、主机、路径都一样），只是其中一段也不行：
    模型编出来或截短的链接最容易把客户带到错误的地方。草稿没写 https:// 时，只要主机和路径相同就算。"""
    known = {link_key(link) for hit in cited for link in re.findall(LINK, nfkc(hit["title"] + " " + hit["text"]))}
    problems = []
    for link in dict.fromkeys(link.rstrip(".,;:!?)]}'\"") for link in re.findall(LINK, nfkc(draft))):
        scheme, host, path = link_key(link)
        if (scheme, host, path) not in known and not (scheme == "" and any(k[1:] == (host, path) for k in known)):
            problems.append(f"链接 {link} 不在引用的片段 {'、'.join(hit['id'] for hit in cited)} 中")
    return problems


def check_numbers(draft, cited, question=""):
    """每个数量都要出现在被引用的片段里：数字连同单位（7 天不等于 7 周），日期、时间、星期按值比较。
    引用了几个片段时，说它的分句还要像在说含这个数的那个片段的事（否则多引一个片段就能挪用别处的数字）。
    问题里的数量（“15 公斤的金毛”）草稿可以复述；没写上午下午的“9 点半”，下午的 21:30 也算。"""
    problems, ids = [], "、".join(hit["id"] for hit in cited)
    asked = {value for _, value, _ in quantities_in(question)}   # 客户自己给的数，换个量词复述也行（25 个人 / 25 人）
    in_chunk = {hit["id"]: quantities_in(hit["title"] + " " + hit["text"]) for hit in cited}   # 每个片段只读一次
    # 算账用的数：片段里的、问题里的，以及草稿里已经核对过的（一步一步算下去）
    pool = [float(value) for quantities in in_chunk.values() for _, value, _ in quantities if isinstance(value, str)]
    pool += [float(value) for value in asked if isinstance(value, str)]
    worked_out = set()
    for clause in re.split(PHRASE_BREAK, draft):
        pairs = bigrams(clause)
        for kind, value, shown in quantities_in(clause):
            number = float(value) if isinstance(value, str) else None   # 日期、时间、星期不参加算账
            if value in asked or number in worked_out or (number is not None and re.search(ARITHMETIC, clause)
                                                          and computed(number, pool)):
                if number is not None:
                    pool.append(number)
                    worked_out.add(number)   # 算出来的数，后面再提到（“所以违约金是 237 元”）也算
                continue
            values = [value] + am_or_pm(kind, value, shown)
            holders = [hit for hit in cited if any(supports(in_chunk[hit["id"]], kind, v) for v in values)]
            if holders and number is not None:
                pool.append(number)
            if not holders:
                problems.append(missing_quantity(kind, value, shown, in_chunk, ids))
            elif len(cited) > 1 and len(pairs) >= 3 and max(overlap(pairs, hit) for hit in holders) < NUMBER_CONTEXT:
                problems.append(f"数字 {plain_shown(kind, value, shown)} 只在 {'、'.join(h['id'] for h in holders)} 里出现，"
                                f"可这一句说的不像是那里的事：「{one_line(clause, 31)}」")
    return problems


def am_or_pm(kind, value, shown):
    """没写上午下午的“9 点半”也可能是晚上 9 点半：返回另一个可能的时间 [21:30 的分钟数]，别的情况返回 []。"""
    if kind == "时间" and "点" in shown and shown[0].isdigit() and value < 720:
        return [value + 720]
    return []


def computed(value, pool):
    """value 是不是 pool 里两个数一步算出来的：和、差、积，或者一个数的百分之几（790 的 30% 是 237）。"""
    for first in pool:
        for second in pool:
            if any(abs(value - result) < 0.01 for result in (first + second, first - second, first * second,
                                                               first * second / 100)):
                return True
    return False


def supports(known, kind, value):
    """片段里的数量 known 能不能支持草稿的一个数量。片段里没写单位的数字，支持任何单位（百分数除外）；
    草稿没写单位的数字，片段里有这个数就算；日期没写年份时，只比月和日。"""
    years = {known_value[0] for known_kind, known_value, _ in known if known_kind == "日期" and known_value[0]}
    with_unit = {known_kind for known_kind, known_value, _ in known if known_value == value and known_kind}
    if kind and kind not in ("日期", "时间", "星期") and with_unit and kind not in with_unit:
        return False   # 片段里这个数带着别的单位（3 个工作日），草稿写成 3 小时：不算支持
    for known_kind, known_value, _ in known:
        if kind == "日期" and known_kind == "日期":
            # 片段里“2025 年 1 月 28 日至 2 月 4 日”的 2 月 4 日没写年份，它也是 2025 年
            possible_years = {known_value[0]} if known_value[0] else years
            if value[1:] == known_value[1:] and (value[0] is None or value[0] in possible_years):
                return True
        elif known_value == value and (known_kind == kind or kind == "" or (known_kind == "" and kind != "%")):
            return True
    return False


def plain_shown(kind, value, shown):
    """问题里怎样称呼一个数量：没有单位的写数字（“30”“30%”），带单位的、日期时间写原文（“7 周”“3 月 1 日”）。"""
    if kind in ("", "%"):
        return value + ("%" if kind == "%" else "")
    return shown


def missing_quantity(kind, value, shown, in_chunk, ids):
    """片段里没有这个数量时的说明。这个数字片段里根本没有，就说“数字 30 不在……”；数字有、单位不同，就把两种写法都说出来。"""
    if kind in ("日期", "时间", "星期"):
        return f"{kind}「{shown}」不在引用的片段 {ids} 中"
    same_number = [known_shown for quantities in in_chunk.values() for known_kind, known_value, known_shown in quantities
                   if known_value == value and "%" not in (kind, known_kind)]
    if kind and same_number:
        return f"数量「{shown}」和引用的片段 {ids} 不同：片段里写的是「{same_number[0]}」"
    if not re.search(r"\d", shown):   # 草稿里写的是中文数字（一周、十五元）：照原样说，免得学生找不到“1”
        return f"数量「{shown}」不在引用的片段 {ids} 中"
    return f"数字 {value}{'%' if kind == '%' else ''} 不在引用的片段 {ids} 中"


def check_quotes(draft, cited):
    """「」『』“” 里的引文要在引用的片段里原样出现；相似度 ≥ QUOTE_NEAR 的算“近似”，更低的算“找不到”。"""
    import difflib   # 只有这里用到（比较引文和原文的相似度）
    problems = []
    for quote in dict.fromkeys(next(group for group in match.groups() if group) for match in re.finditer(QUOTE, draft)):
        wanted, best, best_window = tokens(quote), 0.0, []
        if not wanted:   # 只剩链接（已单独核对）或标点
            continue
        for hit in cited:
            units = tokens(hit["title"] + " " + hit["text"])
            for size in range(max(1, len(wanted) - 2), len(wanted) + 3):   # 窗口放宽 ±2，多一个字少一个字也能对上
                for start in range(max(1, len(units) - size + 1)):
                    window = units[start:start + size]
                    ratio = 1.0 if window == wanted else difflib.SequenceMatcher(None, wanted, window).ratio()
                    if ratio > best:
                        best, best_window = ratio, window
        shown = one_line(quote, 31)
        if best == 1.0:
            continue
        if best >= QUOTE_NEAR:
            changed = sorted(numbers_in("".join(wanted)) - numbers_in(" ".join(best_window)))
            problems.append(f"引文近似，需对照原文：「{shown}」（相似度 {best:.2f}）"
                            + (f"；引文里的数字 {'、'.join(changed)} 和原文不同" if changed else ""))
        else:
            problems.append(f"引文在引用的片段中找不到：「{shown}」")
    return problems


def check_sentences(draft, cited, hits, question=""):
    """整句在引用的片段里找不到依据，就指出这句话；整句有依据（或者短得不做整句检查），再逐个看它的分句
    （逗号、分号、“并且”“另外”隔开的）有没有依据：“……7 天，须提前一天预约”不能靠前半句混过去。"""
    problems = []
    for sentence in dict.fromkeys(split_sentences(draft)):
        pairs = bigrams(re.sub(COURTESY, " ", sentence))
        best = max(overlap(pairs, hit) for hit in cited) if len(pairs) >= MIN_BIGRAMS else None
        if best is None or best >= SUPPORT_THRESHOLD:   # 短句不做整句检查；整句有依据：都再逐个分句看
            problems += unsupported_clauses(clauses_of(sentence), cited, question)
            continue
        shown = one_line(sentence, 31)
        problem = f"这句话在引用的片段里找不到依据：「{shown}」（重合度 {best:.0%}）"
        others = [(overlap(pairs, hit), hit["id"]) for hit in hits if hit not in cited]
        better = max(others, default=(0, None))
        if better[0] >= SUPPORT_THRESHOLD:
            problem += f"；这句话更像来自 {better[1]}"
        problems.append(problem)
    return problems


def clauses_of(sentence):
    """句子的分句，引出引文的那一段（“规则写得很清楚：「……」”里冒号前面的话）不算：它只是在说下面要引用原文。"""
    return split_clauses(re.sub(r"[^，,；;。！？!?]*[：:]\s*(?=[「『“])", " ", sentence))


def unsupported_clauses(clauses, cited, question=""):
    """分句里说事实的字（客套话、引文、数字和“的、是、在、您”这类虚字不算）有 NEW_CHARS 个以上、
    而且超过一半在引用的片段和问题里都没出现过：这多半是模型自己加的一句，例如“……7 天，须提前一天预约”。
    改写会换语序、换虚字，说事实的字大多还是原文里的；复述问题里的话也不算新说法。"""
    seen = set(nfkc(question + " ".join(hit["title"] + hit["text"] for hit in cited)).casefold())
    problems = []
    for clause in clauses:
        text = re.sub("|".join((DATE, CLOCK, HOUR)), " ", nfkc(re.sub(COURTESY + "|" + QUOTE, " ", clause))).casefold()
        content = [char for char in re.findall(r"[^\W\d_]", text) if char not in FUNCTION_CHARS]
        new = [char for char in content if char not in seen]
        if len(new) >= NEW_CHARS and len(new) * 2 > len(content):
            problems.append(f"这个分句在引用的片段里找不到依据：「{one_line(clause, 31)}」")
    return problems


def check_meaning(draft, cited):
    """意思有没有变，四项：
    1. 否定（flipped）：原文“从不自动发送”，草稿却是没有否定的“会自动发送”，或者反过来；
    2. 数字挪到了别的名词上（moved_between_nouns）：“季卡 299 元”，原文季卡是 799 元；
    3. 草稿的每个分句找出原文里最像它的分句（二元组至少一半相同），比较条件词（以上/以下、之前/之后、当天/次日、
       或/并且、每天/每周/每月/每年）和同一种单位的数量——原文那一句用的是相反的词或另一个值，才指出；
    4. 两个分句把说法对调了（swapped）。引文里的话也照样比较：引文本来就该和原文一样。"""
    problems = flipped(draft, cited) + moved_between_nouns(draft, cited)
    originals = [clause.strip() for hit in cited for clause in re.split(PHRASE_BREAK, hit["text"]) if clause.strip()]
    original_pairs = {original: bigrams(original) for original in originals}   # 每个原文分句的二元组只算一次
    known = [quantity for hit in cited for quantity in quantities_in(hit["title"] + " " + hit["text"])]
    matched = []   # [(草稿的分句, 最像它的原文分句)]
    for clause in re.split(PHRASE_BREAK, draft):
        pairs = bigrams(clause)
        if len(pairs) < 3 or not originals:
            continue
        scored = sorted(((len(pairs & original_pairs[other]) / len(pairs), other) for other in originals), reverse=True)
        score, original = scored[0]
        if score < CLAUSE_MATCH:
            continue
        similar = [other for value, other in scored if value >= CLAUSE_MATCH]   # 像它的原文分句可能不止一个
        matched.append((clause, original))
        both = f"草稿「{one_line(clause.strip('「」『』“” '), 31)}」，原文「{one_line(original, 31)}」"
        for word, other in changed_conditions(clause, original):
            if not any(word_class(word) in conditions(candidate) for candidate in similar):
                problems.append(f"条件变了（原文是“{other}”，草稿写成“{word}”）：{both}")
        for shown, other in changed_amounts(clause, original, known):
            if not any(same_amount(shown, candidate) for candidate in similar):
                problems.append(f"数量「{shown}」和原文的「{other}」不同：{both}")
    return problems + swapped(matched)


def swapped(matched):
    """两个分句互换了说法：草稿分句甲对应原文 A、乙对应原文 B，可甲里有只属于 B 的字，乙里有只属于 A 的字，
    而且这些字都离开了原来的位置。“客服人员只负责写草稿……由助手检查”就是把“助手”和“客服人员”对调了。"""
    problems = []
    for first in range(len(matched)):
        for second in range(first + 1, len(matched)):
            (mine_a, theirs_a), (mine_b, theirs_b) = matched[first], matched[second]
            if theirs_a == theirs_b:
                continue
            a, b, source_a, source_b = bigrams(mine_a), bigrams(mine_b), bigrams(theirs_a), bigrams(theirs_b)
            if (a & (source_b - source_a)) - b and (b & (source_a - source_b)) - a:
                problems.append(f"两处说法可能对调了：草稿「{one_line(mine_a.strip(), 21)}」「{one_line(mine_b.strip(), 21)}」，"
                                f"原文「{one_line(theirs_a, 21)}」「{one_line(theirs_b, 21)}」")
    return problems


def negated(text):
    """否定词管着的说法：[(否定词在内的原文写法, 后面的两个字, 再后面的一个字)]。
    “从不自动发送” -> [("从不自动", "自动", "发")]。条件词（“不超过”）和“不同”“无论”这类不表示否定的词先换成空格。"""
    text = without_false_negations(text)
    found = []
    for match in re.finditer(NEGATION, text):
        after = re.match(r"([^\W\d_]{2})([^\W\d_]?)", text[match.end():])
        if after:
            found.append((text[match.start():match.end() + 2], after.group(1), after.group(2).strip("了吗呢吧啊呀哦嘛")))
    return found


def without_false_negations(text):
    """把“不超过”这类带否定字的条件词，和“不同”“无论”这类看着像否定、其实不是的词，换成等长的空格（位置不变）。"""
    return re.sub(NOT_NEGATION + "|" + NEGATIVE_CONDITIONS, lambda m: " " * len(m.group()), text)


def plainly_said(text, phrase, next_char=None):
    """phrase 在 text 里有没有不带否定的说法：同一个分句里、它前面没有否定词；给了 next_char 时，它后面紧跟的字也要是
    next_char（说的是同一样东西：“自动发送”对“自动发送”，不是“包含的”对“包含在”）。返回那一处连同前面两个字的写法，
    没有就是 None。“不可以开通”“不能用借记卡或现金支付”里的“开通”“支付”是被否定的，“团队可以开通”里的不是。"""
    cleaned = without_false_negations(text)
    for match in re.finditer(re.escape(phrase), text):
        if cleaned[match.start():match.end()] != phrase:   # 在“不超过”这类条件词里面，不算
            continue
        clause_start = max([m.end() for m in re.finditer(PHRASE_BREAK, text[:match.start()])], default=0)
        following = re.match(r"[^\W\d_]?", text[match.end():]).group().strip("了吗呢吧啊呀哦嘛")   # 语气词不算
        if not re.search(NEGATION, cleaned[clause_start:match.start()]) and next_char in (None, following):
            return text[max(0, match.start() - 2):match.end()].strip()
    return None


def flipped(draft, cited):
    """同一个说法，一边有否定词管着、另一边只有不带否定的说法。比较的是否定词后面的两个字和再后面的一个字，
    所以“不会自动发送”和“从不自动发送”算同一个意思，“会自动发送”就反了。引用的几个片段合起来算：
    哪个片段里有过同样的说法都行。"""
    source = "\n".join(hit["text"] for hit in cited)
    mine, theirs = negated(draft), negated(source)
    problems = []
    for words, phrase, next_char in theirs:
        plain = plainly_said(draft, phrase, next_char)
        if plain and phrase not in {p for _, p, _ in mine} and not plainly_said(source, phrase):
            problems.append(f"意思可能说反了：原文是「{words}」，草稿写成「{plain}」")
    for words, phrase, next_char in mine:
        plain = plainly_said(source, phrase, next_char)
        if plain and phrase not in {p for _, p, _ in theirs} and not plainly_said(draft, phrase):
            problems.append(f"意思可能说反了：原文是「{plain}」，草稿写成「{words}」")
    return problems


def conditions(text):
    """文字里用到的条件词：{"以上": "超过", …}（类别 -> 原文写法）。所有条件词按长短排好一起找，
    长的先认：“不少于”是“以上”一类，不会被认成里面的“少于”。"""
    words = sorted((word for _, group in CONDITIONS for word in group.split("|")), key=len, reverse=True)
    found = {}
    for match in re.finditer("|".join(words), text):
        found.setdefault(word_class(match.group()), match.group())
    return found


def changed_conditions(clause, original):
    """草稿用了某一类条件词，原文用的是同组的另一类、没有这一类：[(草稿的写法, 原文的写法)]。"""
    mine, theirs = conditions(clause), conditions(original)
    changed = []
    for name, word in mine.items():
        others = [other for group in EXCLUSIVE if name in group for other in group - {name} if other in theirs]
        if others and name not in theirs:
            changed.append((word, theirs[others[0]]))
    return changed


def moved_between_nouns(draft, cited):
    """数字挪到了别的名词上：草稿“季卡 299 元”，原文“月卡 299 元、季卡 799 元”。看数字前面紧挨着的两个字（季卡），
    原文里这两个字后面也跟着同一种单位的数量、却全都不是这个值，就指出来。"""
    source = nfkc("\n".join(hit["text"] for hit in cited))
    problems = []
    owned = owned_quantities(source)
    for owner, kind, value, shown in owned_quantities(nfkc(draft)):
        values = [(known_value, known_shown) for known_owner, known_kind, known_value, known_shown
                  in owned if known_owner == owner and known_kind == kind]
        # 这个值在原文里属于哪个名词：草稿里连那个名词都没提，才是把数字挪了过来（“经济型车押金 3000 元”不算）
        real_owners = [known_owner for known_owner, known_kind, known_value, _ in owned
                       if known_kind == kind and known_value == value]
        if values and value not in [known_value for known_value, _ in values] and real_owners \
                and not any(real in nfkc(draft) for real in real_owners):
            problems.append(f"数量「{owner}{shown}」和原文不同：原文里「{owner}」后面是「{values[0][1]}」")
    return problems


def owned_quantities(text):
    """带单位的数字和它前面紧挨着的两个汉字：“季卡 799 元” -> [("季卡", "元", "799", "799 元")]。"""
    found = []
    for match in re.finditer(r"([^\W\d_]{2})\s*(" + NUMBER + ")", text):
        unit, end = unit_after(text, match.end())
        if unit:
            found.append((match.group(1), unit, plain_number(match.group(2)), text[match.start(2):end].strip()))
    return found


def word_class(word):
    """条件词属于哪一类：“超过” -> "以上"。"""
    return next(name for name, words in CONDITIONS if re.fullmatch(words, word))


def same_amount(shown, text):
    """text 里有没有和 shown（比如“15 元”）种类、值都相同的数量。"""
    return any(quantity[:2] == mine[:2] for mine in quantities_in(shown) for quantity in quantities_in(text))


def char_before(text, shown):
    """shown 在 text 里第一次出现时，前面紧挨着的那个字（跳过空格）。"""
    at = nfkc(text).find(nfkc(shown))
    return nfkc(text)[:at].rstrip()[-1:] if at > 0 else ""


def changed_amounts(clause, original, known):
    """同一种单位、原文是另一个值：[(草稿的写法, 原文的写法)]。“寄件费 3 元”对“寄件费 12 元”，“8 核”对“4 核”。
    只看片段里别处确实有的数量（known 是引用的片段里全部的数量）：片段里根本没有的，check_numbers 已经指出来了。"""
    theirs, mine = quantities_in(original), quantities_in(clause)
    if any(not supports(theirs, kind, value) and supports(known, kind, value) and kind in ("", "日期")
           for kind, value, _ in mine):
        return []   # 草稿这句里还有别的数（型号“iPhone 14”）和这句原文对不上：说的是原文里另一样东西，不在这里比
    changed = []
    for kind, value, shown in mine:
        if not supports(known, kind, value):
            continue
        same_kind = [(known_value, known_shown) for known_kind, known_value, known_shown in theirs if known_kind == kind]
        if kind and same_kind and value not in [known_value for known_value, _ in same_kind]:
            if kind != "日期" or not any(value[1:] == known[1:] for known, _ in same_kind):
                owner = char_before(clause, shown)   # “寄件费 3 元”对“寄件费 12 元”：数字前面是同一个字，才算说的是同一个数
                for known_value, known_shown in same_kind:
                    if owner and owner == char_before(original, known_shown):
                        changed.append((shown, known_shown))
                        break
    return changed


def mark_grounding(result, hits):
    """格式检查通过之后：列出没被引用的命中片段（只是信息），再核对 draft 的出处，对不上就把 status 改成
    needs_review。返回退出码。"""
    result["uncited_hits"] = [hit["id"] for hit in hits if hit["id"] not in result["sources"]]
    if result["status"] != "draft":
        return EXIT_OK
    problems = check_grounding(result["draft"], result["sources"], hits, result["question"])
    if not problems:
        print("核对出处：数量、链接、引文和句子都能在引用的片段里找到，意思也没有说反。", file=sys.stderr)
        return EXIT_OK
    print(f"核对出处：{len(problems)} 处需要人工复核。", *(f"  - {p}" for p in problems), sep="\n", file=sys.stderr)
    result.update(status="needs_review", problems=problems)
    return EXIT_REVIEW


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


ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def instruction_like(text):
    """像是给模型下指令的片段：“忽略 以上 指令” -> ["忽略以上指令"]（先统一全角、大小写、零宽字符和汉字间空白）。"""
    text = nfkc(text).casefold().translate(ZERO_WIDTH)
    text = re.sub(r"(?<=[^\x00-\x7f])\s+(?=[^\x00-\x7f])", "", re.sub(r"\s+", " ", text))
    return [found.group() for pattern in INSTRUCTION_PATTERNS for found in re.finditer(pattern, text)]


def shingles(text, size=4):
    """4 字片段：去掉空白标点、数字记作 # 后每 4 字一片。“试用期 7 天”→{“试用期#”, “用期#天”}。
    只差数字的两段话片段相同，正好能认出“同一条规则的两个版本”。"""
    text = nfkc(re.sub(r"[\W_]+|(\d+(?:\.\d+)?)", lambda m: "#" if m.group(1) else "", text)).casefold()   # 删标点，数字记 #
    return {text[i:i + size] for i in range(max(1, len(text) - size + 1))}


def near_duplicates(texts, threshold):
    """返回 {(i, j): Jaccard 相似度}，只含 ≥ threshold 的对（i < j）。Jaccard = 共有的片段数 ÷ 两边合起来的片段数。
    不把每两条都拿来比：先记下每个片段出现在哪几条记录里（和检索用的“词 → 记录”是同一种索引），
    再数每一对记录共有多少片段；一个片段都不共有的两条（绝大多数）根本不会被数到。
    结果和两两比较完全一样，只是快：100 条、每条 300 字时约 27 ms 对 42 ms（2026-11-30 在开发机上量的），而每次运行都要做这一步。"""
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
            if normalize(keyword) in COMMON_KEYWORDS or len(normalize(keyword)) == 1:
                warnings.append(f"{label}的关键词「{keyword}」太常见或只有一个字，很容易命中不相干的问题")
            elif any(mark in keyword for mark in "，,、/;；"):
                warnings.append(f"{label}的关键词「{keyword}」里有分隔符：一个关键词只能是一个词，请拆开写")
        if len(record["text"]) > TEXT_BUDGET:
            warnings.append(f"{label}的正文有 {len(record['text'])} 个字，超过每个片段 {TEXT_BUDGET} 字的建议上限，"
                            "请切成几个片段")
    return warnings + version_warnings(records)


def version_warnings(records):
    """两条记录正文几乎相同，或标题相同而数字不同：像是同一条规则的两个版本。每条记录只报一次。"""
    similar = near_duplicates([record["text"] for record in records], NEAR_DUPLICATE)
    titles = {}
    for index, record in enumerate(records):
        titles.setdefault(normalize(record["title"]), []).append(index)
    pairs = set(similar) | {(i, j) for group in titles.values() for i in group for j in group if i < j}
    warnings, reported = [], set()
    for first, second in sorted(pairs, key=lambda pair: (pair[1], pair[0])):
        first_numbers, second_numbers = numbers_in(records[first]["text"]), numbers_in(records[second]["text"])
        if second in reported or ((first, second) not in similar and first_numbers == second_numbers):
            continue
        why = f"正文几乎相同（相似度 {similar[first, second]:.2f}）" if (first, second) in similar else "标题相同"
        if first_numbers != second_numbers:
            why += f"，数字却不同（{'、'.join(sorted(first_numbers - second_numbers)) or '没有数字'} 对 " \
                   f"{'、'.join(sorted(second_numbers - first_numbers)) or '没有数字'}）"
        warnings.append(f"第 {first + 1} 条（id \"{records[first]['id']}\"）和第 {second + 1} 条（id \"{records[second]['id']}\"）"
                        f"{why}，像是同一条规则的两个版本；请只保留正确的那一条，不要指望模型替你选")
        reported.add(second)
    return warnings


def print_warnings(warnings, shown):
    """把资料的警告写到 stderr：最多 MAX_WARNINGS 条，其余只说一共还有几条。"""
    more = [f"还有 {len(warnings) - MAX_WARNINGS} 条类似的警告没有列出"] if len(warnings) > MAX_WARNINGS else []
    for warning in warnings[:MAX_WARNINGS] + more:
        print(f"警告：资料文件 {shown}：{warning}。", file=sys.stderr)


def trace_line(stage, started, detail):
    """--trace 的一行：阶段、从 started（time.perf_counter() 的读数）到现在的耗时、计数。调用方只传 id、数量和短摘要。"""
    print(f"[trace] {stage}  {(time.perf_counter() - started) * 1000:.1f} ms  {detail}", file=sys.stderr)


# ---------- 命令行：各课的步骤在 run() 里汇合 ----------

USAGE = ("用法：python retrieval_qa.py [问题] [--retrieve-only | --check-draft 文件] [--documents PATH] "
         "[--timeout 秒] [--trace]；详见 --help。")
NOTES = {
    "retrieved": "只做了检索（--retrieve-only）：没有调用模型，也没有读取密钥。",
    "no_hits": "没有命中任何片段，所以没有调用模型。零命中不等于资料里没有答案，也可能是问法和关键词对不上。",
    "draft": "这是草稿，不会自动发送；数量、链接、引文和句子都能在引用的片段里找到，发出前仍请人工核对。",
    "needs_review": "草稿里有和引用片段对不上的地方，见 problems；请人工核对后再决定用不用。草稿不会自动发送。",
    "missing": "模型认为命中的片段回答不了这个问题；draft 是它的说明，没有核对出处，不要当作回复发出。"
               "这不证明资料库里没有答案，先检查检索。",
    "rejected": "回答没有通过检查，已拒绝，不要使用；原因见 problems。",
    "error": "模型调用失败，没有得到回答。",
}


def run(argv):
    args = parse_command_line(argv, USAGE, flags={"--retrieve-only": "retrieve_only", "--trace": "trace"},
                              value_options={"--documents": "documents", "--timeout": "timeout",
                                             "--check-draft": "check_draft"})
    if args["help"]:
        sys.stdout.write(HELP + "\n" + ENVIRONMENT_HELP)
        return EXIT_OK
    if args["retrieve_only"] and args["check_draft"] is not None:
        raise kit_error(f"--retrieve-only 和 --check-draft 不能同时使用。{USAGE}")
    timeout = parse_timeout(args["timeout"])
    trace = trace_line if args["trace"] else (lambda *unused: None)   # 不加 --trace 时什么也不打印
    # 第 03 课：读资料、检索
    path, started = args["documents"] or DOCUMENTS_PATH, time.perf_counter()
    documents = load_documents(path)
    trace("资料", started, f"{len(documents)} 条记录，{os.path.getsize(path)} 字节")
    question = (args["question"] if args["question"] is not None else ask_question()).strip()
    if not question:
        raise kit_error("问题是空的。请输入一个问题，例如：试用几天？")
    started = time.perf_counter()
    hits = retrieve(question, documents)
    trace("检索", started, "；".join(f"{h['id']}（{'、'.join(one_line(k, 21) for k in h['matched'])}）" for h in hits) or "零命中")
    show_hits(hits)
    result = {"question": question, "status": "retrieved" if hits else "no_hits", "model_called": False, "hits": hits}
    code = EXIT_OK
    if not args["retrieve_only"]:
        result.update(draft=None, sources=[], uncited_hits=[], problems=[])
    if not args["retrieve_only"] and hits:   # 零命中：不读密钥，不发请求，也不检查保存的回答
        started = time.perf_counter()
        materials = build_materials(hits)
        trace("上下文", started, f"{len(materials)} 个片段，{sum(len(m['title']) + len(m['text']) for m in materials)} 字")
        try:
            if args["check_draft"] is not None:   # 第 02 课的 --check-draft：保存的回答代替模型的回答
                answer = check_answer(read_saved_reply(args["check_draft"]), [m["id"] for m in materials])
            else:   # 第 02 课的整条路，只是资料换成了命中的片段
                answer = ask_model(question, materials, timeout, trace)
                result["model_called"] = True
            result.update(answer)
            started = time.perf_counter()
            code = mark_grounding(result, hits)   # 第 04 课
        except NoAnswer as failure:
            started = time.perf_counter()
            print(failure, file=sys.stderr)
            result.update(status=failure.status, problems=failure.problems)
            if args["check_draft"] is None:   # 检查保存的回答时没有请求模型，model_called 保持 false
                result["model_called"] = failure.model_called
            code = failure.exit_code
        first = f"：{one_line(result['problems'][0], 41)}" if result["problems"] else ""
        trace("核对", started, f"{result['status']}，{len(result['problems'])} 个问题{first}")
    result["note"] = NOTES[result["status"]]
    if result["status"] == "error" and not result["model_called"]:
        result["note"] = "没有调用模型：请求还没有发出就停下了，原因见 problems。"
    write_json(result)
    return code


def main(argv=None):
    return run_cli(run, argv)


if __name__ == "__main__":
    sys.exit(main())
