"""资料检索问答：先用人工写的关键词找出命中的资料片段，再决定要不要请模型写草稿。

    $ python retrieval_qa.py --retrieve-only 试用几天？

stdout 上永远只有一个 JSON 对象；提示、进度和错误都写到 stderr。
命令行约定（字段、状态、退出码）见 README.md，后面的课程都建立在它上面。
"""
import json
import os
import sys
import unicodedata

from reply_assistant import (EXIT_INTERRUPTED, EXIT_OK, KitError, ask_question, parse_command_line,
                             parse_timeout, use_utf8_streams, write_json)

# ---------- 常量 ----------

# 资料默认放在脚本旁边，和从哪个目录启动无关。用 os.path 而不用 pathlib：
# pathlib 会顺带导入 urllib，而只检索的路径要和启动 Python 一样轻。
KIT_DIR = os.path.dirname(os.path.realpath(__file__))
DOCUMENTS_PATH = os.path.join(KIT_DIR, "retrieval_documents.json")
MAX_FILE_BYTES = 100 * 1024   # 100 KB：手工切分的教学资料远小于此；更大的文件说明该换工具了
MAX_RECORDS = 100             # 1–100 条：再多就不是“人工切分、人工写关键词”了
MAX_HITS = 3                  # 最多取 3 条：教学取值，不是通用最优参数
PROMPT = "问题："

# 学生最常敲错的全角标点，以及 JSON 需要的半角写法
FULL_WIDTH = {"“": '"', "”": '"', "‘": "'", "’": "'", "，": ",", "：": ":",
              "［": "[", "］": "]", "｛": "{", "｝": "}", "；": ","}

# json 模块的英文报错 → 给学生看的中文说明
JSON_ERRORS = {
    "Expecting value": "这里缺少一个值",
    "Expecting ',' delimiter": "这里应当是逗号「,」",
    "Expecting ':' delimiter": "这里应当是冒号「:」",
    "Expecting property name enclosed in double quotes": "这里应当是用双引号括起来的字段名",
    "Unterminated string starting at": "从这里开始的字符串没有结尾的双引号",
    "Invalid control character at": "字符串里直接出现了换行或控制字符",
    "Extra data": "JSON 数组结束后还有多余的内容",
    "Invalid \\escape": "反斜杠「\\」后面的转义写法不合法",
}

HELP = f"""\
用法：python retrieval_qa.py [问题] [--retrieve-only] [--documents PATH] [--timeout 秒]

按关键词从资料文件里找出和问题相关的片段（最多 {MAX_HITS} 条）；不加 --retrieve-only 时，
只把命中的片段发给模型写草稿，并检查回答。结果以一个 JSON 对象写到 stdout。

  问题                省略时会在 stderr 上提示“{PROMPT}”，再从标准输入读一行
  --retrieve-only     只检索：不调用模型，也不读取密钥
  --documents PATH    改用另一个资料文件（默认：脚本旁边的 retrieval_documents.json）
  --timeout 秒        模型请求的总时限（默认 60 秒）；超时不自动重试
  -h, --help          显示这段说明

零命中时不调用模型，也不读取密钥。
退出码：0 正常；1 需要人工复核；2 用法或资料文件错误；3 模型调用失败；
        4 模型回答被拒绝；130 被 Ctrl-C 中断。

"""


# ---------- 第一步：读取并检查资料文件 ----------

class BadConstant:
    """JSON 里出现的 NaN / Infinity：先记下来，检查结构时再指出它在哪条记录。"""

    def __init__(self, name):
        self.name = name


def load_documents(path=DOCUMENTS_PATH):
    """读取资料文件并逐条检查；任何一处不合规都停下，不跳过坏记录。"""
    shown = os.path.basename(path) if path == DOCUMENTS_PATH else path
    text = decode_documents(read_document_bytes(path, shown), shown)
    data = parse_json(text, shown)
    check_records(data, shown)
    return data


def fail(shown, what, hint=None, where=""):
    """所有资料错误共用一种格式：文件、位置、问题、提示。"""
    message = f"错误：资料文件 {shown}{where}：{what}。"
    if hint:
        message += f"提示：{hint}" + ("" if hint.endswith("？") else "。")
    return KitError(message)


def read_document_bytes(path, shown):
    if os.path.isdir(path):
        raise fail(shown, "这是一个文件夹，不是 JSON 文件", "用 --documents 指向文件本身")
    if not os.path.exists(path):
        hint = "确认它和 retrieval_qa.py 在同一个文件夹，或用 --documents 指定路径"
        if path != DOCUMENTS_PATH:
            hint = ("检查路径的拼写" if os.path.isabs(path) else
                    "--documents 的相对路径从当前文件夹算起，不是从 retrieval_qa.py 所在的文件夹")
        if os.path.exists(path + ".txt"):
            hint = f"同一目录下有 {os.path.basename(path)}.txt，Windows 可能给它多加了 .txt 扩展名"
        raise fail(shown, "找不到这个文件", hint)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise fail(shown, f"无法读取（{error.strerror}）") from None
    if len(data) > MAX_FILE_BYTES:
        raise fail(shown, f"超过了 {MAX_FILE_BYTES} 字节（100 KB）的上限",
                   "资料应当是人工切分的短片段")
    return data


def decode_documents(data, shown):
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise fail(shown, "是 UTF-16 编码", "在编辑器里选择“UTF-8”重新保存")
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


def parse_json(text, shown):
    try:
        return json.loads(text, parse_constant=BadConstant)
    except json.JSONDecodeError as error:
        raise syntax_error(text, error, shown) from None
    except RecursionError:
        raise fail(shown, "括号嵌套太深，无法读取",
                   "资料文件只需要一层数组，里面是一条条对象") from None


def syntax_error(text, error, shown):
    """把 json 的报错换成中文，并猜一猜学生最常见的失误。"""
    pos, message = error.pos, error.msg
    before = text[:pos].rstrip()
    what = next((cn for en, cn in JSON_ERRORS.items() if message.startswith(en)), message)
    char = text[pos:pos + 1]
    line_text = text[text.rfind("\n", 0, pos) + 1:].split("\n", 1)[0]
    hint = None
    if message.startswith("Illegal trailing comma") or (before.endswith(",") and char != "" and char in "]}"):
        pos = len(before) - 1 if before.endswith(",") else pos   # 各 Python 版本都指向这个逗号
        what, hint = "这里多了一个逗号", "数组或对象的最后一项后面不能再写逗号，删掉它"
    elif not text[pos:].strip():
        pos = len(text.rstrip())   # 指向最后一个字符之后，而不是文件末尾的空行
        what, hint = "文件在这里意外结束", "可能少了结尾的「]」或「}」"
    elif char in FULL_WIDTH:
        hint = f"这里是全角字符「{char}」，JSON 的标点要用半角的「{FULL_WIDTH[char]}」（切换到英文输入法再输入）"
    elif char == "'":
        hint = "JSON 的字段名和字符串要用双引号「\"」，不能用单引号「'」"
    elif char in ("/", "#"):
        hint = "JSON 不支持注释（// 、/* */ 或 #），请删掉注释"
    elif char == "," and message.startswith("Expecting value"):
        what, hint = "这里多了一个逗号", "两项之间只要一个逗号，数组开头也不能有逗号，删掉它"
    elif char == "{" and message.startswith("Expecting property name"):
        hint = "上一条记录可能少了结尾的「}」"
    elif message.startswith("Expecting ',' delimiter") and text[pos - 1:pos] == '"':
        hint = "可能是上一项少了逗号「,」；如果是正文里写了英文双引号，请写成 \\\" 或换成中文引号“”"
    elif message.startswith("Expecting ',' delimiter"):
        hint = "上一项的末尾可能漏了逗号「,」"
    elif message.startswith(("Unterminated string", "Invalid control character")):
        quote = next((c for c in line_text if c in "“”"), None)
        hint = (f"这一行有全角引号「{quote}」，字符串结尾的引号可能写成了全角" if quote
                else "检查字符串结尾是否漏了双引号「\"」；正文里要换行请写 \\n")
    elif message.startswith("Invalid \\escape"):
        hint = "要写反斜杠本身，请写成 \\\\"
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return fail(shown, f"JSON 格式不对，{what}", hint, where=f" 第 {line} 行第 {column} 列")


def describe(value):
    """用中文说出“实际是什么”。"""
    if isinstance(value, BadConstant):
        return f"非法值 {value.name}（JSON 不允许 NaN 和 Infinity）"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "布尔值 " + ("true" if value else "false")
    if isinstance(value, (int, float)):
        return f"数字 {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:20] + "…"
        if not value.strip():
            return "只有空白的字符串" if value else "空字符串"
        return "字符串 " + json.dumps(shown, ensure_ascii=False)
    if isinstance(value, list):
        return f"数组（{len(value)} 项）"
    return "对象 {…}"


def is_text(value):
    return isinstance(value, str) and value.strip() != ""


def check_records(data, shown):
    if not isinstance(data, list):
        raise fail(shown, f"最外层应当是 JSON 数组 [ … ]，实际是{describe(data)}")
    if not 1 <= len(data) <= MAX_RECORDS:
        raise fail(shown, f"应当有 1–{MAX_RECORDS} 条记录，实际有 {len(data)} 条")
    first_seen = {}
    for number, record in enumerate(data, start=1):
        label = check_record(record, number, shown)
        if record["id"] in first_seen:
            raise fail(shown, f"{label}的 id 和第 {first_seen[record['id']]} 条重复",
                       "每条记录的 id 必须唯一")
        first_seen[record["id"]] = number


def check_record(record, number, shown):
    """检查一条记录，返回它的称呼，例如：第 2 条记录（id "D01#2"）。"""
    label = f"第 {number} 条记录"
    if not isinstance(record, dict):
        raise fail(shown, f"{label}应当是对象 {{ … }}，实际是{describe(record)}")
    if is_text(record.get("id")):
        label += f"（id {json.dumps(record['id'], ensure_ascii=False)}）"
    for field in ("id", "title", "text", "keywords"):
        if field not in record:
            raise fail(shown, f"{label}缺少字段 {field}", misspelt_field(record, field))
    for field in ("id", "title", "text"):
        if not is_text(record[field]):
            raise fail(shown, f"{label}的字段 {field} 应当是非空字符串，实际是{describe(record[field])}")
    keywords = record["keywords"]
    if not isinstance(keywords, list) or not keywords:
        hint = None
        if is_text(keywords):   # "试用, 体验版" 这样的一个字符串，按逗号拆成数组
            words = [w.strip() for w in keywords.replace("，", ",").split(",") if w.strip()]
            hint = "写成 " + json.dumps(words, ensure_ascii=False)
        raise fail(shown, f"{label}的字段 keywords 应当是非空的字符串数组，实际是{describe(keywords)}", hint)
    for index, keyword in enumerate(keywords, start=1):
        if not is_text(keyword):
            raise fail(shown, f"{label}的 keywords 第 {index} 项应当是非空字符串，实际是{describe(keyword)}")
    for field, value in record.items():
        bad = find_bad_constant(value)
        if bad:
            raise fail(shown, f"{label}的字段 {field} 里有{describe(bad)}")
    return label


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


def misspelt_field(record, field):
    import difflib   # 只在出错时才需要
    unknown = [key for key in record if key not in ("id", "title", "text", "keywords")]
    close = difflib.get_close_matches(field, unknown, n=1, cutoff=0.6)
    quoted = json.dumps(close[0], ensure_ascii=False) if close else ""
    return f"这条记录里有 {quoted}，是不是想写 \"{field}\"？" if close else None


# ---------- 第二步：关键词检索 ----------

def normalize(text):
    """NFKC 把全角字母数字变成半角，casefold 忽略大小写：ＡＢＣ、abc、ABC 视为相同；首尾空白不算。"""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def retrieve(question, documents, limit=MAX_HITS):
    """命中词越多越靠前，同分按 id 升序，最多返回 limit 条。"""
    wanted = normalize(question)
    scored = []
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


# ---------- 第三步：命令行 ----------

USAGE = "用法：python retrieval_qa.py [问题] [--retrieve-only] [--documents PATH] [--timeout 秒]；详见 --help。"
NOTES = {
    "retrieved": "只做了检索（--retrieve-only）：没有调用模型，也没有读取密钥。",
    "no_hits": "没有命中任何片段，所以没有调用模型。零命中不等于资料里没有答案，也可能是问法和关键词对不上。",
    "draft": "这是草稿，不会自动发送；发出前请人工核对事实和出处。",
    "missing": "模型认为命中的片段回答不了这个问题。这不证明资料库里没有答案，先检查检索。",
    "rejected": "模型的回答没有通过检查，已拒绝，不要使用；原因见 problems。",
    "error": "模型调用失败，没有得到回答。",
}


def show_hits(hits):
    """给人看的检索结果（stderr）；机器读的 JSON 在 stdout。"""
    if not hits:
        print("没有命中任何片段。", file=sys.stderr)
        return
    print(f"命中 {len(hits)} 个片段：", file=sys.stderr)
    for hit in hits:
        print(f"  {hit['id']}  {hit['title']}  命中词：{'、'.join(hit['matched'])}", file=sys.stderr)


def ask_model(question, hits, timeout):
    """只有真的要调用模型时才导入网络相关的模块；只检索的路径因此和启动 Python 一样轻。"""
    from model_reply_assistant import answer_with_model
    return answer_with_model(question, hits, timeout)


def run(argv):
    args = parse_command_line(argv, USAGE, flags={"--retrieve-only": "retrieve_only"},
                              value_options={"--documents": "documents", "--timeout": "timeout"})
    if args["help"]:
        from model_reply_assistant import HELP as MODEL_HELP
        sys.stdout.write(HELP + MODEL_HELP[MODEL_HELP.index("环境变量："):MODEL_HELP.index("退出码：")])
        return EXIT_OK
    timeout = parse_timeout(args["timeout"])
    documents = load_documents(args["documents"] or DOCUMENTS_PATH)
    question = (args["question"] if args["question"] is not None else ask_question(PROMPT)).strip()
    if not question:
        raise KitError("错误：问题是空的。请输入一个问题，例如：试用几天？")
    hits = retrieve(question, documents)
    show_hits(hits)
    result = {"question": question, "status": "retrieved" if hits else "no_hits", "model_called": False,
              "hits": hits}
    code = EXIT_OK
    if not args["retrieve_only"]:
        result.update(draft=None, sources=[], problems=[])
        if hits:   # 零命中：不读密钥，不发请求
            outcome, code = ask_model(question, hits, timeout)
            result.update(outcome)
    result["note"] = NOTES[result["status"]]
    if result["status"] == "error" and not result["model_called"]:
        result["note"] = "没有调用模型：请求还没有发出就停下了，原因见 problems。"
    write_json(result)
    return code


def main(argv=None):
    use_utf8_streams()
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except KitError as error:
        print(error, file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("\n已中断（Ctrl-C）。", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # 下游（例如 head）提前关闭了管道：把 stdout 指向空设备，安静退出
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
