"""第 02 课：真正调用模型。标准库 urllib 发一次 HTTPS 请求，回答必须是合规的 JSON，只能引用发过去的资料。

    $ python3 model_reply_assistant.py 试用几天？

默认请求 DeepSeek 官方接口，密钥来自环境变量 DEEPSEEK_API_KEY（没有就用不回显的方式询问）。
没有密钥时可以改用本机的 OpenAI 兼容模型（例如 Ollama）：设置 LOCAL_MODEL_URL 和 LOCAL_MODEL_NAME。
失败时不自动重试：一次请求可能已经计费，要不要再试由你决定。

先读“核心”：入口 ask_model() 在最前，后面依次是它走的每一步——组装请求、generate() 发送、parse_response() 读懂响应、
checked_answer() 检查回答。常量写在用它的代码旁边。请求谁和密钥、发送的细节、读 JSON 和报错这些加固在“选读”分节线后面，
读核心时遇到再去查。命令行在最后：三个脚本共用的外壳（退出码、KitError 和 NoAnswer、解析命令行、入口 run_cli），和本课的 run()。
网络模块（urllib.request、http.client、ssl）和 getpass 写在用到它们的函数里面，不在文件开头导入：
第 03 课的 retrieval_qa.py 也导入这个文件（读 JSON、检查回答），而只检索的命令要和启动 Python 一样轻，不该为用不上的网络模块等几十毫秒。
"""
import sys

if sys.version_info < (3, 10):   # 第 02、03 课的脚本都先读到这里：新语法和新函数出现之前先说清楚，免得旧版 Python 报一串看不懂的错
    sys.stderr.write(f"错误：这套教材需要 Python 3.10 或更新版本，现在是 {sys.version.split()[0]}。\n")
    sys.exit(2)

import codecs
import errno
import functools
import json
import os
import re
import stat
import time
import unicodedata

from reply_assistant import MATERIALS, build_messages

# ---------- 第 02 课的核心：组装请求 → 发送 → 读懂响应 → 检查回答 → 串起来（从上往下读）----------
# 它调用的 model_target、read_api_key、send、parse_json、describe_http_failure 这些加固在后面的“选读”里：先看名字猜意思，遇到再去查。

DEFAULT_TIMEOUT = 60.0       # 一次请求（连接 + 等待 + 读完）的总时限，秒；--timeout 可以改


def ask_model(question, materials, timeout=DEFAULT_TIMEOUT, trace=None, rules="", check=None):
    """这一课的整条路：决定请求谁 → 读密钥 → generate() → checked_answer()。
    返回检查过的回答 {"status", "draft", "sources"}；没有得到能用的回答时抛出 NoAnswer。第 03 课也这样调用它。
    rules、check：提示词里另加的规则和检查它的硬规则（第 07 课的 [n]）。"""
    import urllib.parse
    target = model_target()
    api_key = read_api_key() if target["official"] else read_local_key()
    print(f"正在请求模型 {visible(target['model'])}（{urllib.parse.urlsplit(target['url']).netloc}），最多等 {timeout:g} 秒……",
          file=sys.stderr)
    try:
        reply = generate(question, api_key, materials, timeout=timeout, target=target, rules=rules)
    except NoAnswer as failure:
        trace_exchange(trace, failure.exchange)
        raise
    trace_exchange(trace, reply["exchange"], reply)
    return checked_answer(reply, [material["id"] for material in materials], check)


MAX_TOKENS = 2048            # 回答 JSON 通常不到 300 token；留足余量，免得 JSON 被截断（finish_reason=length）
TEMPERATURE = 0              # 写草稿要稳，不要发挥


def build_request_body(question, materials, model, official=True, rules=""):
    body = {
        "model": model,
        "messages": [dict(message, content=hide_secrets(message["content"]))   # 资料里抄着的密钥不发给模型
                     for message in with_evidence_prompt(build_messages(question, materials), rules)],
        "response_format": {"type": "json_object"},   # JSON 模式：提示词里必须出现 json 和样例
        "max_tokens": MAX_TOKENS,
        "temperature": TEMPERATURE,
        "stream": False,
    }
    if official:   # DeepSeek 自己的字段：V4 默认开思考，思考会占用 max_tokens。别的服务不认识它（LiteLLM 会直接拒绝）
        body["thinking"] = {"type": "disabled"}
    return body


# 依据（evidence）：第 01 课的提示词之外，再请模型给出每句话的依据；第 04 课逐条核对（引文在不在片段里、话和引文对不对得上）
EVIDENCE_EXAMPLE = {"status": "draft", "draft": "根据资料写出的回复草稿", "sources": ["资料的 id"],
                    "evidence": [{"claim": "从 draft 里照抄的一句", "source": "资料的 id", "quote": "从这份资料原文里照抄的一段"}]}
EVIDENCE_PROMPT = f"""6. 另写 evidence，列出草稿里每一句事实的依据：claim 从 draft 里照抄那一句（或那个分句），source 写它依据的资料 id
（必须在 sources 里），quote 从那份资料的正文里一字不改地抄出支持它的那一段。一句话用到两份资料，就写两条。
客套话和“资料里没有提到……”这样的话不用写依据。含 evidence 的格式示例：
{json.dumps(EVIDENCE_EXAMPLE, ensure_ascii=False)}"""


def with_evidence_prompt(messages, rules=""):
    """第 01 课的两条消息，系统提示词后面加上第 6 条：请模型给出 evidence（第 04 课核对它）；
    rules 是再往后加的规则（第 07 课的联网资料用 WEB_RULES）。"""
    system, user = messages
    return [dict(system, content=system["content"] + "\n" + EVIDENCE_PROMPT + ("\n" + rules if rules else "")), user]


def generate(question, api_key, materials=None, timeout=DEFAULT_TIMEOUT, target=None, rules=""):
    """请模型写草稿。materials 省略时发送基线的三份资料；传入 [{id, title, text}, …] 时只发送这些。

    api_key：官方地址用 DeepSeek 密钥；本机模式下是 LOCAL_MODEL_API_KEY（没有就传 None）。
    返回 {"content", "finish_reason", "usage", "model", "exchange"}；调用失败时抛出 NoAnswer（status 为 error，退出码 3）。
    exchange 记下这一来一回的字节数、地址、HTTP 状态和时刻（从不含密钥和正文），--trace 由调用方照着它报告。
    """
    import http.client
    import urllib.parse
    target = target or model_target()
    url, model = target["url"], target["model"]
    exchange = {"started": time.perf_counter(), "host": urllib.parse.urlsplit(url).netloc, "model": model}
    body = json.dumps(build_request_body(question, materials, model, target["official"], rules), ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"   # 密钥只出现在这里
    exchange.update(sent=time.perf_counter(), request_bytes=len(body))
    try:
        status, response_headers, data = send(url, body, headers, timeout)
    except (OSError, http.client.HTTPException, BadResponse) as error:   # 只接网络和服务器的问题；程序自己的 bug 照常报出
        exchange["done"] = time.perf_counter()
        raise make_call_failure(describe_network_failure(error, exchange["host"], local=not target["official"]), exchange) from None
    exchange.update(status=status, response_bytes=len(data))
    try:
        reply = parse_response(status, response_headers, data, dict(target, sent_key=bool(api_key)))
        if mentions_secret(reply["content"], api_key):   # 回答里藏着密钥：这台服务器不可信，整份回答都不给人看
            raise BadResponse("服务器的回答里出现了你的密钥，这份回答已丢弃，不要再用这台服务器")
    except BadResponse as error:
        exchange["done"] = time.perf_counter()
        raise make_call_failure(str(error), exchange) from None
    # 回答正文里已确认没有密钥；finish_reason 也是服务器给的：one_line 先抹密钥再截短
    reply["finish_reason"] = one_line(reply["finish_reason"], 40)
    exchange["done"] = time.perf_counter()
    reply["exchange"] = exchange
    return reply


def parse_response(status, headers, data, target):
    """把一次 HTTP 响应变成 {"content", "finish_reason", "usage", "model"}；用不了就抛出 BadResponse（一句中文）。
    headers 的名字都是小写。"""
    if 300 <= status < 400:
        raise BadResponse(describe_redirect(status, headers.get("location"), target))
    if status != 200:
        raise BadResponse(describe_http_failure(status, headers, data, target))
    text = response_text(headers, data)
    try:
        payload = parse_json(text)
    except JsonProblem as problem:
        raise BadResponse("服务器的响应不是 JSON" if problem.line else f"服务器的响应无法读取：{problem.what}") from None
    if not isinstance(payload, dict) or not payload.get("choices"):
        detail = describe_error_object(payload)
        if detail:
            raise BadResponse(f"服务器返回了错误对象，而不是回答：{detail}")
        raise BadResponse("服务器的响应里没有回答（choices 缺少或是空的）")
    choice = payload["choices"][0] if isinstance(payload["choices"], list) else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise BadResponse("服务器的响应里没有 choices[0].message")
    finish_reason = reported_finish_reason(choice)
    if finish_reason == "insufficient_system_resource":   # DeepSeek：服务器资源不够，回答没写完，不是模型的错
        raise BadResponse("服务器资源不足，回答没有写完（finish_reason：insufficient_system_resource），请稍后手动重试")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise BadResponse(f"服务器的回答格式不对：choices[0].message.content 应当是字符串，实际是{describe_value(content)}")
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    return {"content": content if isinstance(content, str) else "",
            "finish_reason": finish_reason if isinstance(finish_reason, str) else describe_value(finish_reason) if "finish_reason" in choice else "没写",
            "usage": {key: value for key, value in usage.items() if type(value) is int},   # 只留 token 计数
            "model": target["model"]}


class Text:
    """样子表里的一段文字：非空字符串，fold 以后至少有一个字或数字（只有标点、空白或零宽字符的不算）。
    编号、标题、关键词要放进一行提示，不能有换行、ESC 这样的控制字符；lines=True 的（草稿、正文、引文）可以有，写出去时转义。"""

    def __init__(self, lines=False):
        self.lines = lines

    def problem(self, value):
        if not isinstance(value, str) or not value.strip():
            return f"应当是非空字符串，实际是{describe_value(value)}"
        if not self.lines and any(unicodedata.category(char) == "Cc" for char in value):
            return "里有控制字符（换行、ESC 之类）"
        if not any(char.isalnum() for char in fold(value)):
            return f"「{visible(value, 20)}」里没有字或数字：只有标点，或零宽字符、方向标记这样看不见的字符"
        return None


class Many(list):
    """样子表里至少有一项的数组：Many([样子]) 和 [样子] 一样，只是不能是空的。"""


ANSWER_STATUSES = ("draft", "missing")
EVIDENCE_FIELDS = ("claim", "source", "quote")
# 回答的样子（shape_problem 照它验）：draft 的回答要有字、至少一个来源；missing 的草稿和来源可以是空的
ANSWER = {"status": object, "draft": Text(lines=True), "sources": Many([Text()])}   # status 的值另有一条规则，只说一次
MISSING_ANSWER = {"status": object, "draft": str, "sources": [str]}
EVIDENCE_ITEM = {"claim": Text(lines=True), "source": Text(), "quote": Text(lines=True)}
MAX_NAMED_SOURCES = 5         # 一次拒绝最多点名 5 个越界的来源，其余只说一共还有几个


def checked_answer(reply, allowed_ids, check=None):
    """硬规则，就是第 02 课列的七条：截断、空白、不是单个 JSON 对象（字段写了两遍也算）、状态不对、不合 ANSWER 的样子
    （草稿里没有字、没有来源……）、来源不是这次发送的、evidence 写得不对（见 evidence_problems），都拒绝。
    通过就返回 {"status", "draft", "sources", "evidence"}（来源已去重；没写 evidence 时它是 None），并在 stderr 上说一声；
    不通过就抛出 NoAnswer（rejected，退出码 4），problems 列出每一处不合规。check(answer)：这一次另加的硬规则，返回不合规的地方。"""
    content = reply["content"].strip()
    if reply["finish_reason"] != "stop":
        usage = reply.get("usage") or {}
        counted = (f"；这次输入 {usage['prompt_tokens']} + 输出 {usage['completion_tokens']} 个 token，本机模型的上下文窗口太小时也会这样"
                   if reply["finish_reason"] == "length" and {"prompt_tokens", "completion_tokens"} <= set(usage) else "")
        raise make_rejection(f"回答没有正常结束（finish_reason：{reply['finish_reason']}，应当是 stop），可能被截断{counted}",
                             raw=reply["content"])
    if not content:
        raise make_rejection("回答是空的", raw=reply["content"])
    try:
        answer = parse_json(reply["content"])
    except JsonProblem as problem:
        if not content.startswith(("{", "[")):   # 代码块、一段话、“好的，以下是……”再接 JSON：说开头是什么，比“第 1 行第 1 列”好懂
            raise make_rejection(f"回答不是单个 JSON 对象（{how_it_starts(content)}）", raw=reply["content"]) from None
        if problem.line is None:   # 嵌套太深、整数太长、NaN
            raise make_rejection(f"回答无法读取（{problem.what}）", raw=reply["content"]) from None
        where = f"第 {problem.line} 行第 {problem.column} 列：{problem.what}" + (f"。{problem.hint}" if problem.hint else "")
        raise make_rejection(f"回答不是单个 JSON 对象（{where}）", raw=reply["content"]) from None
    if not isinstance(answer, dict):
        raise make_rejection("回答不是单个 JSON 对象", raw=reply["content"])
    status, draft, sources = answer.get("status"), answer.get("draft"), answer.get("sources")
    problems = [f"status 是{describe_value(status)}，只允许 draft 或 missing"] if "status" in answer and status not in ANSWER_STATUSES else []
    shape = shape_problem(answer, MISSING_ANSWER if status == "missing" else ANSWER)
    if shape:   # 来源写成了数字 1，该写字符串 "1"：说出要加引号
        numbers = [item for item in sources if type(item) is int and str(item) in allowed_ids] if isinstance(sources, list) else []
        hint = f"，要加引号写成 \"{numbers[0]}\"" if numbers else ""
        raise make_rejection(*problems, shape + hint, raw=reply["content"])
    allowed = set(allowed_ids)
    unknown = [source for source in dict.fromkeys(sources) if source not in allowed]
    for source in unknown[:MAX_NAMED_SOURCES]:
        problems.append(f"来源「{visible(source)}」不在这次发送的资料里（只允许 {'、'.join(sorted(allowed))}）")
    if len(unknown) > MAX_NAMED_SOURCES:   # 回答里写了几万个编号：不把它们一条条印出来
        problems.append(f"还有 {len(unknown) - MAX_NAMED_SOURCES} 个来源也不在这次发送的资料里，没有一一列出")
    evidence = answer.get("evidence")
    if "evidence" in answer and status == "draft":   # missing 的回答没有要核对的事实，写了 evidence 也不看
        problems += evidence_problems(evidence, sources)
    problems += check(answer) if check else []
    if problems:
        raise make_rejection(*problems, raw=reply["content"])
    sources = list(dict.fromkeys(sources))
    if status == "missing":
        print("回答格式合规：missing（发送的资料回答不了这个问题）", file=sys.stderr)
    else:
        print(f"回答格式合规：draft，引用 {'、'.join(one_line(s, 40) for s in sources)}", file=sys.stderr)
    evidence = [{field: item[field] for field in EVIDENCE_FIELDS} for item in evidence] \
        if status == "draft" and evidence is not None else None   # 没写、写了 null，或是 missing 的回答：None
    return {"status": status, "draft": draft.strip(), "sources": sources, "evidence": evidence}


def evidence_problems(evidence, sources):
    """evidence 的格式（第 7 条硬规则）：数组，每项合 EVIDENCE_ITEM 的样子，source 在 sources 里；别的字段（reason 之类）不看。
    不写（或写 null）也行：第 04 课改用逐句对齐去猜（选读）。内容对不对由第 04 课核对；写坏几千项的，只点名前几处。"""
    if evidence is None:
        return []
    if not isinstance(evidence, list):
        return [shape_problem(evidence, [EVIDENCE_ITEM], ["evidence"])]
    problems = []
    for index, item in enumerate(evidence):   # 每一项只说第一处毛病
        problem = shape_problem(item, EVIDENCE_ITEM, ["evidence", index])
        if problem or item["source"] not in sources:
            problems.append(problem or f"evidence 第 {index + 1} 项的来源「{visible(item['source'])}」不在 sources 里")
        if len(problems) > MAX_NAMED_SOURCES:   # 几千项写坏的 evidence：只点名前几处，不一条条印出来
            return problems[:MAX_NAMED_SOURCES] + ["evidence 里还有别的问题，没有一一列出"]
    return problems


def make_rejection(*problems, raw=None):
    """回答被拒绝（退出码 4）。raw 是模型原本写的内容：报错时附上一行，方便排查。"""
    return NoAnswer("rejected", problems, raw=raw)


# ---------- 第 02 课 · 加固（选读）：写出去的文字、请求谁和密钥、发送的细节、读 JSON 和报错 ----------


# ---------- 写出去的文字：一个 JSON、对终端安全、不带密钥 ----------

# 别人给的文字（问题、资料、保存的回答、模型和服务器的话）里可能有终端控制字符（ESC 序列能清屏、改窗口标题）、
# 方向控制和零宽字符（屏幕上看到的和存下来的不一样），也可能有密钥（sk-… 长串、Bearer …，夹着零宽字符也算）
UNSAFE_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


INVISIBLE = "\u200b-\u200f\u2060-\u2064\ufeff"


KEY_SHAPED = re.compile(f"(s[{INVISIBLE}]*k[{INVISIBLE}]*-|Bearer\\s+)(?:[{INVISIBLE}]*[A-Za-z0-9_.~+/-]){{16,}}", re.IGNORECASE)


class ShownSafely:
    """stdout、stderr 的外包装，写出去的一切都经过它：看着像密钥的换成 ***（KEY_SHAPED）；UNSAFE_CHARACTERS 换成 \\uXXXX
    （换行和制表符照旧）。在 JSON 字符串里 \\uXXXX 正是同一个字符的合法转义，读回来一字不差；
    在终端上看到的是“\\u202e”这样的字样，不会被它改掉显示。
    quiet=True（stderr 用）：写不出去（2>/dev/full、只读打开的 stderr）时提示就丢掉，和 2>&- 一样，不影响 stdout 上的结果。"""

    def __init__(self, stream, quiet=False):
        self.stream, self.quiet = stream, quiet

    def write(self, text):
        text = UNSAFE_CHARACTERS.sub(lambda match: f"\\u{ord(match.group()):04x}", hide_secrets(text))
        try:
            return self.stream.write(text)
        except OSError as error:
            return self.lost_quietly(error, len(text))

    def flush(self):
        try:
            return self.stream.flush()
        except OSError as error:
            return self.lost_quietly(error, None)

    def lost_quietly(self, error, returned):
        """写不出去了（error）：stdout 的交给 run_cli（退出码 5）；stderr 的提示就丢掉，以后的也都写进空设备。返回 returned。"""
        if not self.quiet:
            raise error
        lost, self.stream = self.stream, open(os.devnull, "w", encoding="utf-8", errors="replace")
        try:   # 没写出去的还在原来的缓冲区里：它的文件描述符也接到空设备上，Python 退出时冲缓冲区就不会再报错
            os.dup2(self.stream.fileno(), lost.fileno())
        except (OSError, ValueError):   # 不是真的文件（检查里换成了内存里的流）
            pass
        return returned

    def __getattr__(self, name):   # fileno、isatty、reconfigure……都照旧交给原来的流
        return getattr(self.stream, name)


def shown_safely():
    """让 stdout、stderr 写出去的一切都经过 ShownSafely（run_cli 一开始调用，checks/ 的工具也经过它）。"""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, ShownSafely):
            setattr(sys, name, ShownSafely(stream, quiet=name == "stderr"))


def write_json(result):
    """stdout 上只写这一个 JSON 对象：UTF-8、缩进、中文不转义。看着像密钥的先在每个字符串里抹掉，再转成 JSON：
    转成 JSON 以后，制表符成了“\\t”两个字，“Bearer⇥密钥”就认不出来了。"""
    sys.stdout.write(json.dumps(masked(result), ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


def masked(value):
    """value（JSON 的对象、数组、字符串）里的每个字符串都经过 hide_secrets：{"a": ["Bearer 0123…"]} -> {"a": ["Bearer ***"]}。"""
    if isinstance(value, str):
        return hide_secrets(value)
    if isinstance(value, dict):
        return {key: masked(item) for key, item in value.items()}
    return [masked(item) for item in value] if isinstance(value, list) else value


SECRET_VARIABLES = ("DEEPSEEK_API_KEY", "LOCAL_MODEL_API_KEY", "SEARCH_API_KEY")
TYPED_KEYS = []   # 这次运行里不回显输入的密钥（checked_key 记下）：它们不在环境变量里，也要抹掉
MIN_SCRUBBED_KEY = 8         # 短于 8 个字符的“密钥”（本机服务常填的占位符 a、none、ollama、sk-1234）不是秘密，抹掉反而会把 Ollama 这样的词弄坏


def hide_secrets(text):
    """写出去（stdout、stderr、网页、缓存）和发给模型的文字都经过这里，不管文字是从哪里来的（搜索结果的摘要也可能抄着密钥）：
    配置了的密钥（SECRET_VARIABLES 和输入的）换成 ***，看着像密钥的（KEY_SHAPED）也换成 ***。"""
    for secret in dict.fromkeys([os.environ.get(name, "").strip() for name in SECRET_VARIABLES] + TYPED_KEYS):
        if len(secret) >= MIN_SCRUBBED_KEY:   # 没设密钥（学生只检索时）就什么也不用找
            text = scrub(text, secret)
    return KEY_SHAPED.sub(lambda match: match.group(1) + "***", text)


# ---------- 四个小工具：比较用的写法，读数量和一步算，把别人给的文字并成一行，用中文说出一个值是什么 ----------

MARKUP = "*_~`\\"   # Markdown 的强调和转义记号：**D04#1**、D04**#**1、D04\#1 里的这些都不是编号的一部分
FILLERS = "\u115f\u1160\u3164\uffa0"   # 看不见、却算作字母的几个填充字符


def invisible(char):
    """看不见、比较时不算的字符：格式字符（Cf：零宽、方向标记、隐形运算符、软连字符……）、组合附加符号（Mn、Me：变体选择符 FE0F、
    U+034F……）和填充字符。"""
    return unicodedata.category(char) in ("Cf", "Mn", "Me") or char in FILLERS


@functools.lru_cache(maxsize=1024)   # 同一份草稿、同一个关键词要比很多次（每句话都在整份草稿里找编号）：只折叠一次
def fold(text, keep_case=False, as_html=False):
    """比较用的写法，套件里只有这一种：检索的问题和关键词、片段编号、草稿里的 [n]、域名，读资料时和核对时都先经过它。
    NFKC（全角变半角、花体变普通），去掉看不见的字符（invisible）和 Markdown 的记号，不分大小写，去掉首尾空白；数字和小数点照留。
    "Ｄ04**#**1\u200e" -> "d04#1"。keep_case：保留大小写（给人看）；as_html：先当作网页显示出来的样子（去掉标签，&#35; 显示成 #），
    找草稿里的片段编号时再看一遍这个样子。"""
    import html
    text = html.unescape(re.sub(r"</?[a-z][^<>]*>", "", text, flags=re.IGNORECASE)) if as_html else text
    text = "".join(char for char in unicodedata.normalize("NFKC", text) if char not in MARKUP and not invisible(char))
    return (text if keep_case else text.casefold()).strip()


# 数量的写法都在 amounts 里读：阿拉伯数字（最多 15 位）、中文数字（最多 16 个字，可以带万、亿）、半、百分之几、几折、日期、钟点
NUMERAL = "〇零一二两三四五六七八九十百千万亿"
UNIT = (r"%|个?工作日|个?小时|分钟|秒|个?月|个?星期|周岁|岁|天|日|号|周|年|元|块钱|块|折|次|个?人|名|位|张|副|件|台|晚|公里|厘米|毫米|米|公斤|千克|克|斤|"
        r"毫升|升|倍|个|项|份|节|间|条|家|核|度|座|期|(?i:[tgmk]b)(?![a-z])")
QUANTITY = (rf"(?<![\d.第个几数{NUMERAL}])(百分之)?(\d{{1,15}}(?:,\d{{3}})*(?:\.\d{{1,6}})?|(?<![周期拜])[〇零一二两三四五六七八九十百千][{NUMERAL}]{{0,15}}"
            rf"(?:点[{NUMERAL}]{{1,6}})?|半)(?![\d〇零一二两三四五六七八九十])\s*([百千万亿])?(个?半)?\s*({UNIT})?(半)?")   # 1.2 万元、3万、两个半小时、三天半、七五折
DATE = r"(?<!\d)(?:(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)|(\d{1,2})\s*月\s*(\d{1,2})\s*[日号])"   # 2026-03-01、3 月 1 日
CLOCK = r"(?!\s)(上午|早上|中午|下午|傍晚|晚上|夜里|半夜|凌晨)?\s*(?<![\d.〇零一二两三四五六七八九十百千万亿])(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*(?:[:：]\s*(\d{2})(?!\d)|点\s*(半|\d{1,2}\s*分)?(?![〇零一二两三四五六七八九]))"
UNIT_NAMES = {"个工作日": "工作日", "个小时": "小时", "个月": "月", "个星期": "周", "星期": "周", "日": "天", "号": "天", "块钱": "元", "块": "元",
              "个人": "人", "名": "人", "位": "人", "千克": "公斤", "周岁": "岁", "个半": "半"}   # 同一单位记成一种（GB、gb 见 amounts）
RANGE = re.compile(r"[一二两三四五六七八九]{2}")   # 七八天、两三个月是约数，不是 78、23（七五折的“七五”另说）
ONE_COUNTS = {"折", "天", "日", "周", "个星期", "星期", "个月", "月", "年", "个小时", "小时", "分钟", "元", "块"}   # 这些单位前的“一”才是数：一个月，不是一次、一个
SCALE = {"周": (7, "天"), "天": (24, "小时"), "小时": (60, "分钟"), "分钟": (60, "秒"), "年": (12, "月"), "公斤": (1000, "克"), "斤": (500, "克"),
         "公里": (1000, "米"), "米": (100, "厘米"), "厘米": (10, "毫米"), "升": (1000, "毫升")}   # 换算：一周 = 7 天，1.2 米 = 120 厘米


@functools.lru_cache(maxsize=64)   # 同一段文字（片段、引文）每个分句都要读一遍：只读一次。读出的字典别改它
def amounts(text):
    """文字里的数量 {(值, 单位): 写法}，每种写法都在这里读：“七天内，每人 299 元，下午 3 点，八折” -> {(7.0, "天"): "七天",
    (299.0, "元"): "299 元", (900, "时刻"): "下午 3 点", (80.0, "%"): "八折"}。中文数字要带单位才算（“一律”不是数，“一次”也不是，见 ONE_COUNTS）。
    日期按月和日比（“2026-03-01”和“3 月 1 日”都是 (301, "日期")），钟点按从零点起的分钟（见 clock）。"""
    text, found = unicodedata.normalize("NFKC", text), {}
    for match in re.finditer(DATE, text):
        month, day = int(match.group(2) or match.group(4)), int(match.group(3) or match.group(5))
        if 1 <= month <= 12 and 1 <= day <= 31:   # 13 月、32 日不是日期
            found[(month * 100 + day, "日期")] = match.group().strip()
        if match.group(1):   # 2026-03-01 的年份；“2026 年 3 月 1 日”的年份下面照常读
            found[(float(match.group(1)), "年")] = match.group(1)
    found.update({clock(match): match.group().strip() for match in re.finditer(CLOCK, text) if clock(match)})
    found.update({(50.0, "%"): match.group() for match in re.finditer("一半|半价", text)})   # 一半、半价 = 五折 = 50%
    for match in re.finditer(QUANTITY, re.sub(f"{DATE}|{CLOCK}|一半|半价", lambda m: " " * len(m.group()), text)):
        percent, number, big, half, unit, after = match.groups()
        chinese = not number[0].isdigit() and number != "半"
        if (not chinese or unit or percent) and (number != "一" or unit in ONE_COUNTS) and not (chinese and RANGE.fullmatch(number) and unit != "折"):
            value = numeral(number) * {"百": 100, "千": 1000, "万": 1e4, "亿": 1e8}.get(big, 1) + 0.5 * bool(half or after and unit)
            unit = "%" if percent else UNIT_NAMES.get(unit, (unit or "").upper())
            found[(value * 10 if unit == "折" and value < 10 else value, "%" if unit == "折" else unit)] = match.group().strip()
    return found


def clock(match):
    """CLOCK 找到的钟点 -> (从零点起的分钟, 单位)：写了上午下午、或写成 19:00 的是“时刻”；只写“9 点”的是“点钟”，上午下午都可能
    （same_amount 按 12 小时比）。下午、晚上的 1–11 点加 12 小时。“快一点”的“一点”不是钟点：None。"""
    part, hour, minute, rest = match.groups()
    if hour == "一" and not (part or minute or rest):
        return None
    hour, minutes = numeral(hour), int(minute or 0) or (30 if rest == "半" else int(re.sub(r"\D", "", rest or "") or 0))
    if hour > 24 or minutes > 59:   # 25 点、99:99 不是钟点
        return None
    hour += 12 if part in ("下午", "傍晚", "晚上") and hour < 12 or part == "中午" and hour < 11 else \
        -12 if part in ("晚上", "夜里", "半夜", "凌晨") and hour == 12 else 0
    return (hour * 60 + minutes) % 1440, "点钟" if not part and minute is None and hour <= 12 else "时刻"


def numeral(text):
    """一个数的写法 -> 值：“1,000” -> 1000，“十四” -> 14，“一万二千”“一万二” -> 12000，“七五” -> 75（七五折），“三点五” -> 3.5，“半” -> 0.5。"""
    if text[0].isdigit() or text == "半":
        return 0.5 if text == "半" else float(text.replace(",", ""))
    digit = {char: i for i, char in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
    whole, _, decimals = text.partition("点")
    decimals = float("0." + "".join(str(digit[char]) for char in decimals if char in digit)) if decimals else 0
    if not re.search("[十百千万亿]", whole):   # 一个个念的数字：七五、二零二五
        return float("".join(str(digit[char]) for char in whole) or 0) + decimals
    total = section = current = 0
    if re.search("[百千万亿][一二两三四五六七八九]$", whole):   # 三千五、一万二、一百五：末尾的数是下一位的（3500、12000、150）
        whole += {"百": "十", "千": "百", "万": "千", "亿": "千万"}[whole[-2]]
    for char in whole:
        if char in "十百千":
            section, current = section + (current or 1) * 10 ** ("十百千".index(char) + 1), 0
        elif char == "万":
            total, section, current = total + (section + current) * 10_000, 0, 0
        elif char == "亿":
            total, section, current = (total + section + current) * 10 ** 8, 0, 0
        else:
            current = digit[char]
    return float(total + section + current) + decimals


def same_amount(first, second):
    """两个数量是不是同一个：值相同、单位相同或一边没写（百分数除外），或者换算过来相同（一周 = 7 天，半小时 = 30 分钟，见 SCALE）。"""
    if first == second:
        return True
    bare = "" in (first[1], second[1]) and "%" not in (first[1], second[1])   # 没写单位的数可以是任何单位，百分数除外
    if "点钟" in (first[1], second[1]) and {first[1], second[1]} <= {"点钟", "时刻"}:   # “9 点半”可以是 21:30
        return first[0] % 720 == second[0] % 720
    return first[0] == second[0] and (first[1] == second[1] or bare) or in_base(*first) == in_base(*second)


@functools.lru_cache(maxsize=4096)   # 一个数量要和片段里的每个数量比：换算只做一次
def in_base(value, unit):
    """换算到最小的单位：(1, "周") -> (10080.0, "分钟")，(1.2, "米") -> (120.0, "厘米")。"""
    while unit in SCALE:
        value, unit = value * SCALE[unit][0], SCALE[unit][1]
    return round(value, 6), unit


@functools.lru_cache(maxsize=16)   # 一份回答里每个数量都拿它来查：同一组数只算一次
def one_step(numbers):
    """两两一步算出的 {值: (数, 数, 算式)}：加减乘除、打折、百分之几。(398.0, 80.0) -> {478.0: (398.0, 80.0, "398 + 80 = 478"), …}"""
    results = {}
    for i, a in enumerate(numbers):
        for b in [b for b in numbers[:i] + numbers[i + 1:] if b]:
            for value, shown in ((a + b, f"{a:g} + {b:g}"), (a - b, f"{a:g} - {b:g}"), (a * b, f"{a:g} × {b:g}"), (a / b, f"{a:g} ÷ {b:g}"), (a * b / 100, f"{a:g} × {b:g}%")):
                if round(value, 2) not in (a, b):   # 358.2 这样的钱数，两位小数就够
                    results.setdefault(round(value, 2), (a, b, f"{shown} = {round(value, 2):g}"))
    return results


def amount_known(amount, known):
    """amount 和 known（{(值, 单位): 写法}）里的某一个是不是同一个数量（same_amount）。先按值、换算后的值、钟点找出可能相同的
    几个再比，不和片段里几千个数量一个个比。"""
    value, unit = amount
    index = amount_index(tuple(known))
    return any(same_amount(amount, other) for key in (value, in_base(value, unit), ("钟", value % 720)) for other in index.get(key, ()))


@functools.lru_cache(maxsize=64)   # 同一段片段的数量，每个分句的每个数都要查
def amount_index(known):
    index = {}
    for value, unit in known:
        for key in (value, in_base(value, unit), ("钟", value % 720)):
            index.setdefault(key, []).append((value, unit))
    return index


def one_line(text, limit=None):
    """把别人给的文字（服务器、模型、文件）放进一行提示：换行、制表符、控制字符（包括终端的 ESC 序列）、
    零宽和方向控制字符都换成空格并合并；给了 limit 就截到 limit 个字以内，截断时退回到最近的空格
    （不把英文单词切成两半），末尾加“…”。先抹密钥再截短：截在密钥中间，半截密钥就认不出来了。"""
    text = " ".join("".join(char if char.isprintable() else " " for char in hide_secrets(str(text))).split())
    if limit is None or len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if cut.rfind(" ") >= limit * 0.7:
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip(" ,.;:，。；：") + "…"


def visible(text, limit=40):
    """把别人写的编号、状态原样放进一句话：看不见的字符（换行、零宽、方向控制……）写成 \\u200b 这样的六个字，首尾的空格
    留着；超过 limit 个字就交给 one_line 截短。例：“D01#1”后面跟一个零宽字符 -> D01#1\\u200b；"draft " -> 「draft 」里看得见空格。"""
    shown = "".join(char if char.isprintable() else f"\\u{ord(char):04x}" for char in hide_secrets(str(text)))   # 先抹密钥再截短
    return shown if len(shown) <= limit else one_line(shown, limit)   # 太长的照 one_line 截短


def how_it_starts(content):
    """不是以「{」开头的回答怎么开头：外面包了代码块，或 JSON 之外还写了别的话（模型的客套话，或 --check-draft 文件里多写的）。
    说出前 20 个字，看不见的 BOM、零宽空格写成 \\ufeff 这样，不然读起来像是以「{」开头。"""
    if content.startswith("```"):
        return "外面包了 ``` 代码块"
    content = hide_secrets(content)   # 先抹密钥再截短：截下来的半截密钥就认不出了
    start = visible(content[:20], 30) + ("…" if len(content) > 20 else "")
    return f"开头是「{start}」，不是「{{」：JSON 之外还写了别的话"


def describe_value(value):
    """用中文说出“实际是什么”。"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "布尔值 " + ("true" if value else "false")
    if isinstance(value, (int, float)):
        return f"数字 {visible(str(value), 21)}"
    if isinstance(value, str):
        if not value.strip():
            return "只有空白的字符串" if value else "空字符串"
        return "字符串 " + json.dumps(visible(value, 21), ensure_ascii=False).replace("\\\\u", "\\u")
    if isinstance(value, list):
        return f"数组（{len(value)} 项）"
    return "对象 {…}"



# ---------- 第一步：请求谁，用哪个密钥 ----------

ENDPOINT = "https://api.deepseek.com/chat/completions"   # 固定的官方地址，不接受其他远程地址
DEFAULT_MODEL = "deepseek-v4-flash"   # deepseek-chat 已于 2026 年停用；型号会变，用 DEEPSEEK_MODEL 覆盖


def model_target(environ=None):
    """返回 {"url", "model", "official"}。LOCAL_MODEL_ 开头的变量一个都没有，才请求 DeepSeek 官方地址；
    设置了 LOCAL_MODEL_URL 就请求本机模型；设置了别的 LOCAL_MODEL_ 变量、或者 LOCAL_MODEL_URL 是空的，是用法错误（退出码 2）。"""
    environ = os.environ if environ is None else environ
    for variable in ("LOCAL_MODEL_URL", "LOCAL_MODEL_NAME", "DEEPSEEK_MODEL"):   # 不是 UTF-8 的值：点名是哪个变量，不带着乱码往下走
        if any("\udc80" <= char <= "\udcff" for char in environ.get(variable, "")):
            raise make_kit_error(f"环境变量 {variable} 的值不是 UTF-8 文本（终端的编码不对？）：请重新设置它。资料和密钥都没有发出。")
    local = environ.get("LOCAL_MODEL_URL", "").strip()
    others = sorted(name for name in environ if name.upper().startswith("LOCAL_MODEL_") and name != "LOCAL_MODEL_URL")   # 拼错的、小写的也算
    if not local and ("LOCAL_MODEL_URL" in environ or others):   # 想用本机模型，地址却是空的：绝不悄悄改发官方地址
        named = "LOCAL_MODEL_URL 是空的" if "LOCAL_MODEL_URL" in environ else f"设置了 {'、'.join(others)}，却没有设置 LOCAL_MODEL_URL"
        raise make_kit_error(f"{named}：要用本机模型，请写上地址（例如 http://127.0.0.1:11434/v1）；"
                             "要用 DeepSeek，请把 LOCAL_MODEL_ 开头的变量都删掉（unset）。资料和密钥都没有发出。")
    if not local:
        return {"url": ENDPOINT, "model": environ.get("DEEPSEEK_MODEL", "").strip() or DEFAULT_MODEL, "official": True}
    base = local_base_url(local)
    name = environ.get("LOCAL_MODEL_NAME", "").strip()
    if not name:
        raise make_kit_error("设置了 LOCAL_MODEL_URL，还需要用 LOCAL_MODEL_NAME 指定本机模型的名字（例如 qwen2.5:7b）。")
    return {"url": base + "/chat/completions", "model": name, "official": False}


def odd_character(url):
    """网址里第一个不该有的字符：空格、反斜杠、全角或中文、看不见的字符（解析网址和真正连接时可能读成两样）；没有是 None。"""
    return next((char for char in url if not (char.isascii() and char.isprintable()) or char in " \\"), None)


def local_base_url(url):
    """检查 LOCAL_MODEL_URL，返回用检查过的主机和端口重新拼出来的地址：urllib 连接的正是这里检查过的地方。

    只接受 http(s)://主机[:端口][/路径]，主机是 127.0.0.0/8 里的地址、[::1] 或 localhost，端口 1–65535。
    "http://localhost:11434/v1/" -> "http://localhost:11434/v1"；"http://127.0.0.1/v1" -> "http://127.0.0.1:80/v1"
    """
    import urllib.parse
    example = "例如 http://127.0.0.1:11434/v1"
    odd = odd_character(url)
    if odd:
        raise make_kit_error(f"LOCAL_MODEL_URL 里有「{visible(odd)}」：只写普通的半角网址，不要空格、反斜杠、全角或看不见的字符，{example}。")
    try:   # 方括号没配对，或方括号里写了 IPv4 地址：新版 Python 的 urlsplit 就拒绝，旧版放过的 [127.0.0.1] 由 split_host_port 拒绝
        parts = urllib.parse.urlsplit(url)
        host, port = split_host_port(parts.netloc, 443 if parts.scheme == "https" else 80)
    except ValueError:
        host = None
    if host is None:
        raise make_kit_error(f"LOCAL_MODEL_URL 写得不对：方括号要配对，里面只能写 IPv6 地址（例如 [::1]），IPv4 地址直接写 127.0.0.1，{example}，现在是 {url}。")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise make_kit_error(f"LOCAL_MODEL_URL 要以 http:// 开头，{example}，现在是 {url}。")
    if "@" in parts.netloc:   # http://127.0.0.1@evil.example/：看着像本机，其实连的是 @ 后面的主机
        raise make_kit_error("LOCAL_MODEL_URL 里不能有用户名或密码（@ 和它前面的部分）；"
                       f"本机服务要密钥时请用 LOCAL_MODEL_API_KEY，{example}。")
    if "?" in url or "#" in url:
        raise make_kit_error(f"LOCAL_MODEL_URL 里不能有 ? 或 #：程序要在地址后面接 /chat/completions，{example}。")
    if parts.path.rstrip("/").endswith("/chat/completions"):
        shorter = url.rstrip("/")[:-len("/chat/completions")]
        raise make_kit_error(f"LOCAL_MODEL_URL 只写到 /v1 为止，程序会自己接上 /chat/completions，请写成 {shorter}。")
    if port is None:
        raise make_kit_error("LOCAL_MODEL_URL 的端口应当是 1–65535 之间的整数（Ollama 默认 11434，LiteLLM 默认 4000），"
                       f"现在是 {url}。")
    if not is_loopback(host):
        hint = "请直接写 127.0.0.1。" if host.startswith("::ffff:") else ""
        raise make_kit_error(f"LOCAL_MODEL_URL 只能指向本机（127.0.0.1、::1 或 localhost），"
                       f"现在是 {url}。资料不会发给其他机器。{hint}")
    if host == "localhost":   # 名字要解析，hosts 文件缺了这一行或 DNS 不可信时可能指向别处：解析一次，每个地址都得是本机
        address = resolved_localhost(port)
        host = host if parts.scheme == "https" else address   # http 直接连解析出的地址；https 留着名字，证书要对得上它
    shown_host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown_host}:{port}{parts.path.rstrip('/')}"


def resolved_localhost(port):
    """把 localhost 解析一次：每个地址都在本机才用，返回其中的 IPv4 地址（没有就是 ::1），http 直接连它，不再解析第二次。
    例：解析到 ::1 和 127.0.0.1 -> "127.0.0.1"；解析到 10.0.0.5 -> 用法错误（退出码 2），什么也不发。"""
    import socket   # 只在本机模式、地址写的是 localhost 时才用到
    use_instead = "请把 LOCAL_MODEL_URL 里的 localhost 换成 127.0.0.1。资料不会发出。"
    try:
        addresses = [info[4][0] for info in socket.getaddrinfo("localhost", port, proto=socket.IPPROTO_TCP)]
    except OSError:
        raise make_kit_error(f"这台机器解析不出 localhost。{use_instead}") from None
    outside = [address for address in addresses if not is_loopback(address)]
    if outside or not addresses:
        raise make_kit_error(f"这台机器上的 localhost 指向 {'、'.join(dict.fromkeys(outside)) or '（没有地址）'}，不是本机。{use_instead}")
    return next((address for address in addresses if ":" not in address), addresses[0])


def split_host_port(netloc, default_port):
    """"127.0.0.1:11434" -> ("127.0.0.1", 11434)；"[::1]" -> ("::1", 默认端口)；端口不合规时端口为 None，
    方括号里不是 IPv6 地址时两个都是 None。
    自己拆，不用 urlsplit 的 .port：各版本 Python 对 ":+80"、":99999" 的处理不一样。"""
    if netloc.endswith("]") or ":" not in netloc:
        host, port_text = netloc, str(default_port)
    else:
        host, _, port_text = netloc.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        if ":" not in host:   # 方括号里只能是 IPv6 地址
            return None, None
        host = host[1:-1]
    port = int(port_text) if port_text.isdigit() and len(port_text) <= 5 else 0
    return host.lower(), (port if 1 <= port <= 65535 else None)


def is_loopback(host):
    """localhost（连接前再由 resolved_localhost 解析核对）、127.0.0.0/8、::1。其他一律不算，包括 ::ffff:127.0.0.1
    （各版本 Python 对它的判断不同，这里统一拒绝）。"""
    import ipaddress   # 只在检查本机地址时才用到
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:   # 域名、写法不标准的地址（127.1）、带 %网卡 的地址
        return False
    return address in ipaddress.ip_network("127.0.0.0/8") if address.version == 4 else address == ipaddress.ip_address("::1")


NO_KEY_OPTIONS = ("没有密钥时，可以用 LOCAL_MODEL_URL 改用本机模型（见第 02 课），或把保存的回答交给 --check-draft 检查"
                  "（model_reply_assistant.py 和 retrieval_qa.py 都有这个选项），或用 retrieval_qa.py --retrieve-only 只检索。")


def read_api_key():
    """从 DEEPSEEK_API_KEY 读密钥；没有就不回显地询问（ask_hidden）。终端藏不住输入时宁可停下。"""
    value = os.environ.get("DEEPSEEK_API_KEY", "")
    if value.strip():
        return checked_key(value, "DEEPSEEK_API_KEY")
    unset = "是空的" if "DEEPSEEK_API_KEY" in os.environ else "没有设置"
    no_terminal = make_not_sent(f"环境变量 DEEPSEEK_API_KEY {unset}，而当前终端无法隐藏输入，"
                                "为了不让密钥显示出来，程序停下了。请先设置 DEEPSEEK_API_KEY 再运行；"
                                f"{NO_KEY_OPTIONS}")
    value = ask_hidden("DeepSeek API Key（输入不回显）：")
    if value is None:
        raise no_terminal
    if not value.strip():
        raise make_not_sent(f"没有输入密钥。可以先设置环境变量 DEEPSEEK_API_KEY；{NO_KEY_OPTIONS}")
    return checked_key(value, "DEEPSEEK_API_KEY", typed=True)


def ask_hidden(prompt):
    """用 getpass 不回显地问一行（密钥）；终端藏不住输入时返回 None，绝不让密钥显示出来。"""
    import getpass
    import warnings
    if sys.platform == "win32" and not (sys.stdin and sys.stdin.isatty()):
        return None   # Windows 的 getpass 在 IDE 控制台里可能卡住
    with warnings.catch_warnings():
        warnings.simplefilter("error", getpass.GetPassWarning)   # 藏不住输入时 getpass 只发警告并回显，这里改为停下
        try:
            return getpass.getpass(prompt, stream=sys.stderr)
        except (getpass.GetPassWarning, EOFError, OSError):
            return None


def read_local_key():
    """本机模式只读 LOCAL_MODEL_API_KEY（可以不设），从不读 DeepSeek 密钥。"""
    value = os.environ.get("LOCAL_MODEL_API_KEY", "")
    return checked_key(value, "LOCAL_MODEL_API_KEY") if value.strip() else None


def checked_key(value, variable, typed=False):
    """去掉首尾空白，再看密钥像不像样。有问题就停下：报错只说哪里不对，从不显示密钥本身。"""
    key = value.strip()
    if "\n" in key or "\r" in key:
        problem = "中间有换行（复制时多带了一行？）"
    elif any(char.isspace() for char in key):
        problem = "中间有空格"
    elif any("\udc80" <= char <= "\udcff" for char in key):   # 不是 UTF-8 的字节，Python 记成这样的代用字符（和 model_target 一样）
        problem = "不是 UTF-8 文本（终端的编码不对？）"
    elif not key.isprintable():
        problem = "里有看不见的控制字符"
    elif not key.isascii():
        problem = "里有中文、全角字母或其他非 ASCII 字符"
    elif key[0] in "\"'" or key[-1] in "\"'":
        problem = "带着引号（Windows cmd 的 set 命令不要加引号）"
    else:
        if typed:
            TYPED_KEYS.append(key)
        return key
    where = "输入的密钥" if typed else f"环境变量 {variable} 的值"
    raise make_not_sent(f"{where}{problem}，不像一个完整的 {variable}。请重新复制密钥再试；请求没有发出。")


def make_not_sent(reason):
    """请求还没发出就停下了（没有密钥、密钥不像样）：也是“没有回答”，只是 model_called 为 false。"""
    return NoAnswer("error", [reason], model_called=False)


# ---------- 第二步的细节：总时限、只装用得上的 urllib 部件、抹掉密钥、说清网络错误 ----------

def send(url, body, headers, timeout):
    """发一次 POST，返回 (HTTP 状态码, 响应头, 响应体字节)。整个过程不超过 timeout 秒。

    DeepSeek 慢的时候会不停地发空行保持连接，单次读取的超时永远不会触发；
    所以让请求在后台线程里进行，这里只等到总时限为止。
    """
    import threading
    outcome = {}

    def exchange():
        try:
            outcome["value"] = open_and_read(url, body, headers, timeout)
        except BaseException as error:   # 交给主线程处理
            outcome["error"] = error

    worker = threading.Thread(target=exchange, daemon=True)
    worker.start()
    deadline = time.monotonic() + timeout
    while worker.is_alive():
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"超过 {timeout:g} 秒还没有完整的回答")
        worker.join(min(left, 0.1))   # 小步等待，Ctrl-C 随时有效
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


MAX_RESPONSE_BYTES = 1024 * 1024   # 响应体最多读 1 MiB，再大就是出了问题


def open_and_read(url, body, headers, timeout):
    """发请求、读响应。urllib.request.urlopen 默认装着一整套处理器：读系统代理的、跟随重定向的……
    这里一个个挑，只装用得着的：
      - 没有代理处理器：不读 HTTP_PROXY 这些变量，资料和密钥不经过别的机器；
      - 没有重定向处理器：3xx 和 4xx、5xx 一样作为 HTTPError 交回来，请求（连同密钥）不会发往 Location 指的地方；
      - https 地址才装 HTTPS 处理器，用校验证书的默认上下文（加载系统根证书要几十毫秒，http 的本机模型用不着）；
      - 两个处理器读响应时都用 urllib_handlers() 里的 CheckedResponse（见那里）。
    """
    import ssl
    import urllib.error
    import urllib.request
    http_handler, https_handler = urllib_handlers()
    opener = urllib.request.OpenerDirector()
    for handler in (http_handler(), urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    if url.startswith("https://"):
        opener.add_handler(https_handler(context=ssl.create_default_context()))
    request = urllib.request.Request(url, data=body, headers=headers, method="GET" if body is None else "POST")   # 第 07 课有的搜索接口用 GET
    try:
        with opener.open(request, timeout=timeout) as response:
            data = response.read(MAX_RESPONSE_BYTES + 1)
            if len(data) > MAX_RESPONSE_BYTES:
                raise BadResponse("响应体超过 1 MiB 上限")
            return response.status, lower_keys(response.headers), data
    except urllib.error.HTTPError as error:   # 3xx、4xx、5xx 都在这里
        with error:   # 错误响应的正文只用来摘一句服务器说的话：读前 1 MiB 就够，再长也照样报出 HTTP 状态
            return error.code, lower_keys(error.headers or {}), error.read(MAX_RESPONSE_BYTES)


def urllib_handlers():
    """返回 (HTTP 处理器类, HTTPS 处理器类)，它们和 urllib 自带的一样，只是读响应用 CheckedResponse：
    http.client 照单全收服务器给的分块大小，写成 -1 时它会一直读到连接关闭，1 MiB 的上限就管不住了；
    CheckedResponse 把负数一律当作坏响应（http.client 把这里的 ValueError 报成 IncompleteRead），
    还跳过 103 这类中间响应（http.client 会把它当成最终的响应）。
    这几个类写在函数里，是因为它们的父类来自网络模块，而网络模块要到真的发请求时才导入。"""
    import http.client
    import urllib.request

    class CheckedResponse(http.client.HTTPResponse):
        def _read_status(self):
            """102、103 Early Hints 这类中间响应（RFC 9110：客户端跳过）连同它的头一起跳过，等最终的响应；
            http.client 自己只跳过 100。"""
            while True:
                version, status, reason = super()._read_status()
                if not 102 <= status < 200:
                    return version, status, reason
                while self.fp.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass

        def _read_next_chunk_size(self):
            size = super()._read_next_chunk_size()
            if size < 0:
                raise ValueError(f"分块大小是负数 {size}")
            return size

    class CheckedHTTPConnection(http.client.HTTPConnection):
        response_class = CheckedResponse

    class CheckedHTTPSConnection(http.client.HTTPSConnection):
        response_class = CheckedResponse

    class CheckedHTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, request):
            return self.do_open(CheckedHTTPConnection, request)

    class CheckedHTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, request):   # 和 urllib 自己的 https_open 一样，只是换成上面的连接类；_context 是构造时给的上下文
            return self.do_open(CheckedHTTPSConnection, request, context=self._context)

    return CheckedHTTPHandler, CheckedHTTPSHandler


def lower_keys(headers):
    return {name.lower(): value for name, value in headers.items()}


SECRET_PIECE = 12           # 密钥里连着的 12 个字也算密钥：少抄了头尾几个字的半截密钥照样抹掉（短于 12 个字的密钥要整个出现）


def scrub(text, secret, any_case=True):
    """服务器和异常带来的文字离开这一层之前都经过这里：万一其中出现密钥，换成 ***。密钥中间被插进空白、看不见的字符
    （invisible 认的那些：零宽、软连字符、变体选择符……），写成了全角，改了大小写，或者只抄了其中连着的 SECRET_PIECE 个字，
    也认得出来。any_case=False 只认大小写一样的（mentions_secret 用：密钥恰好像个词，比如 ollama-local，回答里写 Ollama-Local 不算泄露）。"""
    if not secret or len(secret) < MIN_SCRUBBED_KEY:
        return text
    wanted = secret.casefold() if any_case else secret
    size = min(len(wanted), SECRET_PIECE)
    pieces = {wanted[start:start + size] for start in range(len(wanted) - size + 1)}
    letters = lambda value: re.sub(r"[^0-9a-z]", "", unicodedata.normalize("NFKC", value).casefold())   # noqa: E731
    seen = letters(text)   # 先粗筛一遍（快）：只留字母数字，哪一段都连不上，就一定没有它
    if all(letters(piece) for piece in pieces) and not any(letters(piece) in seen for piece in pieces):
        return text
    kept, where = [], []   # 去掉空白和看不见的字符、全角变半角以后的每个字，和它在原文里的位置
    for index, char in enumerate(text):
        for piece in unicodedata.normalize("NFKC", char):
            if not piece.isspace() and not invisible(piece):
                kept += piece.casefold() if any_case else piece
                where += [index] * len(piece.casefold() if any_case else piece)
    kept, covered = "".join(kept), ["."] * len(kept)
    for piece in pieces:
        start = kept.find(piece)
        while start >= 0:
            covered[start:start + size] = ["*"] * size
            start = kept.find(piece, start + 1)
    for run in reversed(list(re.finditer(r"\*+", "".join(covered)))):   # 连着盖住的一段换成一个 ***；从后往前换，前面的位置不变
        text = text[:where[run.start()]] + "***" + text[where[run.end() - 1] + 1:]
    return text


def mentions_secret(content, secret):
    """回答里有没有密钥：原文里有，或者解析成 JSON 之后有（服务器可以把密钥写成 \u0073\u006b… 这样的转义）。"""
    if not secret or len(secret) < MIN_SCRUBBED_KEY:
        return False
    if scrub(content, secret, any_case=False) != content:   # 整份回答都要丢掉：只认原样的密钥，不因为一个同名的词丢掉好回答
        return True
    try:   # 读成 JSON 再原样写回去：\u0073 这样的转义都解开了，字段名和值都在里面（parse_json 在第三步）
        decoded = json.dumps(parse_json(content), ensure_ascii=False)
    except JsonProblem:
        return False
    return scrub(decoded, secret, any_case=False) != decoded


MAX_FAILURE_TEXT = 300       # 一条失败原因最多 300 个字：中文说明加上服务器原话的开头，够看清原因，又不会刷屏


def make_call_failure(reason, exchange=None, retried=0):
    """请求发出之后失败的唯一出口：并成一行、截短（one_line 先经 hide_secrets 抹掉密钥再截短），退出码 3。
    exchange 留给 --trace（见 trace_exchange）。retried：第 07 课的搜索重试过几次（模型的请求从不重试）。"""
    tried = f"重试了 {retried} 次也没有成功。" if retried else "没有自动重试。"
    failure = NoAnswer("error", [f"{one_line(reason, MAX_FAILURE_TEXT)}。{tried}"], model_called=True)
    failure.exchange = exchange
    return failure


def trace_exchange(trace, exchange, reply=None):
    """--trace（第 05 课）的两行：请求（字节、地址、模型）和响应（HTTP 状态、字节、finish_reason、token 用量）。
    trace 是 None（没加 --trace）或没有发出请求时什么也不报。"""
    if trace is None or exchange is None:
        return
    trace("请求", exchange["started"], f"{exchange['request_bytes']} 字节，发往 {exchange['host']}，模型 {exchange['model']}",
          exchange["sent"])
    if "status" not in exchange:
        detail = "没有收到响应"
    elif reply is None:
        detail = f"HTTP {exchange['status']}，{exchange['response_bytes']} 字节，无法使用"
    else:
        detail = f"HTTP {exchange['status']}，{exchange['response_bytes']} 字节，finish_reason {reply['finish_reason']}"
        if reply["usage"]:
            detail += f"，token {reply['usage'].get('prompt_tokens')} 输入 + {reply['usage'].get('completion_tokens')} 输出"
    trace("响应", exchange["sent"], detail, exchange["done"])


def describe_network_failure(error, host, local=False, service="本机模型", variable="LOCAL_MODEL_URL"):
    """把网络层的异常翻译成一句中文：原因和该做什么。service：连不上时提醒学生去看的那个服务（第 07 课是假搜索接口）。"""
    import http.client
    import ssl
    if isinstance(error, BadResponse):
        return f"{host} 的{error}"
    reason = getattr(error, "reason", error)   # urllib 把真正的原因包在 URLError.reason 里
    if isinstance(reason, TimeoutError):
        return f"请求 {host} 超时（{one_line(reason)}），可以用 --timeout 调大时限"
    if isinstance(reason, ConnectionRefusedError):
        return f"连接 {host} 被拒绝：那里没有服务在监听（{service}启动了吗？端口写对了吗？）"
    if isinstance(reason, http.client.RemoteDisconnected):
        return f"{host} 没有回答就断开了连接"
    if isinstance(reason, ConnectionResetError):
        return f"{host} 中途断开了连接"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"{host} 的 TLS 证书校验失败：请更新系统根证书，不要关闭证书校验"
    if isinstance(reason, ssl.SSLError):
        hint = f"；本机服务多半只讲 http，把 {variable} 里的 https:// 改成 http://" if local else ""
        return f"和 {host} 的 TLS 连接失败（{reason.reason or reason.__class__.__name__}）{hint}"
    if isinstance(reason, OSError) and reason.__class__.__name__ == "gaierror":
        return f"无法解析域名 {host}：检查网络连接和 DNS"
    if isinstance(error, http.client.IncompleteRead):
        return f"{host} 的响应不完整：传到一半连接断了，或者分块的格式不对"
    if isinstance(error, http.client.HTTPException):
        return f"{host} 的回答不是合规的 HTTP（{error.__class__.__name__}）：那个端口上的服务可能不是{service}"
    return f"网络错误：{one_line(reason)}"


# ---------- 第三步：读懂服务器的响应 ----------

class BadResponse(Exception):
    """服务器的响应用不了（重定向、HTTP 错误、不完整、不是 JSON……）：带一句中文说明，在 generate() 里变成 NoAnswer。"""


class JsonProblem(Exception):
    """JSON 读不出来的原因（中文）。语法错误时还有行、列和提示；嵌套太深、整数太长时 line 为 None。"""

    def __init__(self, what, hint=None, line=None, column=None):
        super().__init__(what)
        self.what, self.hint, self.line, self.column = what, hint, line, column


MAX_JSON_CHARS = 1024 * 1024   # 最多读 1 MiB 的 JSON：和响应体的上限一样；资料文件、学生的小文件另有更小的上限
LONE_SURROGATE = re.compile("[\ud800-\udfff]")   # 正常读出来的文字里不会有它们：只有 JSON 里写了落单的 \ud800 这样的转义才会
MAX_JSON_DEPTH = 20            # 套件读的 JSON 最多四五层（evidence 第 1 项的 quote）；再深就不是手写的文件或正常的回答


def parse_json(text, limit=MAX_JSON_CHARS):
    """套件从外面读的每一个 JSON（资料文件、保存的和模型的回答、服务器的响应、搜索缓存、学生的练习文件）都经过这里，
    结果只有两种：一个值，或者 JsonProblem（一句中文），哪一处都不会冒出 traceback。
    比 json.loads 严格：同一个对象里字段写了两遍（json 只悄悄留下后一个）、NaN 和 Infinity（JSON 标准里没有）、大到读成无穷大的数、
    落单的 \\ud800 这样的半个字符、超过 limit 个字、嵌套超过 MAX_JSON_DEPTH 层，都读不出来，并说出在哪里：
    “evidence 第 1 项里字段 quote 写了 2 次”。"""
    if len(text) > limit:
        raise JsonProblem(f"超过了 {limit} 个字的上限")
    try:
        value = json.loads(text, object_pairs_hook=JsonObject, parse_constant=BadConstant)
    except json.JSONDecodeError as error:
        line, column, what, hint = describe_json_error(text, error)
        raise JsonProblem(what, hint, line, column) from None
    except RecursionError:   # [[[[…… 嵌套几万层：json 模块递归太深
        raise JsonProblem("括号嵌套太深，无法读取") from None
    except ValueError:   # 超过 4300 位的整数：Python 为了防止拖慢程序，拒绝把这么长的数字串转成整数
        raise JsonProblem("里面有位数太多的整数，无法读取") from None
    stack = [(value, ())]   # 用栈而不用递归：从前往后一项项看，报出的是写在最前面的那一处
    while stack:
        item, path = stack.pop()
        if isinstance(item, (dict, list)) and len(path) >= MAX_JSON_DEPTH:   # 最外层的括号算第 1 层
            raise JsonProblem(f"嵌套超过了 {MAX_JSON_DEPTH} 层")
        if isinstance(item, BadConstant):
            raise JsonProblem(f"{where_in_json(path) or '里面'}是 {item.name}，JSON 不允许 NaN 和 Infinity")
        if isinstance(item, float) and abs(item) == float("inf"):   # 1e400 这样的数，json 读成了无穷大
            raise JsonProblem(f"{where_in_json(path) or '里面'}的数太大，读出来是无穷大")
        lone = next(filter(None, map(LONE_SURROGATE.search, (item,) if isinstance(item, str) else item if isinstance(item, dict) else ())), None)
        if lone:   # "\ud800" 这样的转义：读得出来，却不是一个字，写文件、发请求时才出错（对象要看字段名）
            where = where_in_json(path)
            raise JsonProblem(f"{where + '里' if where else '里面'}有落单的半个字符 \\u{ord(lone.group()):04x}（\\ud800–\\udfff 要两个配成对才是一个字）")
        if isinstance(item, JsonObject) and item.duplicates:
            key, values = next(iter(item.duplicates.items()))
            shown = " 和 ".join(one_line(json.dumps(value, ensure_ascii=False, default=lambda bad: bad.name), 30) for value in values)
            where = where_in_json(path)
            raise JsonProblem(f"{where and where + '里'}字段 {visible(key)} 写了 {len(values)} 次（{shown}）",
                              "JSON 只会悄悄保留最后一个值：删掉多余的，或把它们合成一个")
        if isinstance(item, (dict, list)):   # 整数、true、false、null 没什么可查的，不放进栈
            stack.extend((child, path + (step,)) for step, child in reversed(list(item.items() if isinstance(item, dict) else enumerate(item)))
                         if not isinstance(child, (int, type(None))))
    return value


def where_in_json(path):
    """JSON 里的位置，接在一句话的前面：["evidence", 0, "quote"] -> "evidence 第 1 项的 quote "；[0, "b", "url"] -> "第 1 项的 b 的 url "；
    [] -> ""。"""
    where = ""
    for step in path:
        name = visible(step, 20) if isinstance(step, str) and step.strip() else json.dumps(step)   # 空的字段名写成 ""
        where += f" 第 {step + 1} 项" if isinstance(step, int) else ("的 " if where.endswith("项") else " 的 " if where else "") + name
    return where.strip() + ("" if not where or where.endswith("项") else " ")   # “第 1 项里”，“quote 里”


TYPE_NAMES = {str: "字符串", int: "数字", float: "数字", bool: "布尔值（true 或 false）", type(None): "空值 null", object: "任何值"}


def shape_name(shape):
    """样子的中文名：{"a": str} -> "对象 {a}"；Many([Text()]) -> "非空的字符串数组"。"""
    if isinstance(shape, dict):
        return f"对象 {{{', '.join(field.rstrip('?') for field in shape)}}}"
    if isinstance(shape, list):
        inner = shape_name(shape[0])
        items = "字符串数组" if inner == "字符串" else f"数组（每项是{inner}）" if isinstance(shape[0], dict) else "数组"
        return ("非空的" if isinstance(shape, Many) else "") + items
    if isinstance(shape, Text):
        return "字符串"
    return "或".join(dict.fromkeys(TYPE_NAMES[kind] for kind in (shape if isinstance(shape, tuple) else (shape,))))


def shape_problem(value, shape, path=(), root=""):
    """value 合不合 shape 的样子：合就是 None，不合就说出第一处，例如“results 第 2 项缺少字段 url”。
    套件从外面读的 JSON 先过 parse_json，再拿这里对一张样子表：回答（ANSWER）、evidence 的每一项、资料文件的每条记录、
    域名名单、搜索缓存、练习文件。样子是：类型（str、int……，几种就写元组；object 是什么都行）、Text()、
    [每一项的样子]（数组；Many 表示至少一项），或 {字段: 样子}（对象；字段名以 ? 结尾的可以不写，没列的字段不看）。
    root 是 value 的称呼（“第 2 条记录（id "A2"）”），不给就从字段名说起。用栈而不用递归。"""
    stack = [(value, shape, list(path))]   # path：value 自己在哪里，例如 ["evidence", 0]
    while stack:
        value, shape, path = stack.pop()
        if isinstance(shape, dict):
            if not isinstance(value, dict):
                return f"{place(root, path) or '最外层'}应当是{shape_name(shape)}，实际是{describe_value(value)}"
            missing = [field for field in shape if field not in value and not field.endswith("?")]
            if missing:   # 拼错了的字段名（qoute）猜一猜
                guess = closest(missing[0], [key for key in value if key not in shape and key + "?" not in shape])
                return f"{place(root, path)}缺少字段 {missing[0]}" + (f"（有一个 {visible(guess)}，是不是想写 {missing[0]}？）" if guess else "")
            stack.extend((value[field.rstrip("?")], inner, path + [field.rstrip("?")])
                         for field, inner in reversed(shape.items()) if field.rstrip("?") in value)
        elif isinstance(shape, list):
            if not isinstance(value, list) or (isinstance(shape, Many) and not value):
                return f"{place(root, path) or '最外层'}应当是{shape_name(shape)}，实际是{describe_value(value)}"
            stack.extend((item, shape[0], path + [index]) for index, item in reversed(list(enumerate(value))))
        elif isinstance(shape, Text):
            problem = shape.problem(value)
            if problem:
                return place(root, path) + problem
        elif not {object, type(value)} & set(shape if isinstance(shape, tuple) else (shape,)):   # 比 type 而不是 isinstance：true 不算数字
            return f"{place(root, path) or '最外层'}应当是{shape_name(shape)}，实际是{describe_value(value)}"
    return None


def place(root, path):
    """shape_problem 说的位置：root 加上 path（“第 2 条记录（id "A2"）的 keywords 第 1 项”）。出错时才算：几万项的数组不必每项都算一遍。"""
    inner = where_in_json(path)
    return root + ("的 " + inner if root and inner else inner)


class JsonObject(dict):
    """json 模块读到的对象；duplicates 记下写了不止一次的字段名和它的各个值，parse_json 看到就拒绝。"""

    def __init__(self, pairs):
        super().__init__(pairs)
        values = {}   # 每个字段名写过的值：走一遍就分好（几万个重复的字段也不会越算越慢）
        for key, value in pairs:
            values.setdefault(key, []).append(value)
        self.duplicates = {key: written for key, written in values.items() if len(written) > 1}


class BadConstant:
    """json 模块读到的 NaN、Infinity：先记下，parse_json 再说出它在哪里。"""

    def __init__(self, name):
        self.name = name


# 中文输入法打出来的标点（拼音输入法里 [ ] \ 是【】、），以及 JSON 要的半角写法。引号不管单双、直角都换成 "：JSON 不认单引号
FULL_WIDTH = {"“": '"', "”": '"', "‘": '"', "’": '"', "「": '"', "」": '"', "『": '"', "』": '"', "＂": '"',
              "，": ",", "、": ",", "；": ",", "：": ":", "［": "[", "］": "]", "【": "[", "】": "]", "｛": "{", "｝": "}"}
# 字符串结束得不对时 json 报的几种错：接着的不是冒号或逗号，或者字符串一直没结束
STRING_TROUBLE = ("Expecting ':'", "Expecting ','", "Unterminated string", "Invalid control character")
# 全角的右引号，和它配对的左引号（＂没有左右之分）
CLOSING_QUOTES = {"”": "“", "」": "「", "』": "『", "’": "‘", "＂": None}
JSON_SPACE = " \t\r\n"   # JSON 认的空白只有这四个；str.strip() 还会去掉全角空格、不换行空格，在这里不能用
# 看不见、JSON 又不当作空白的字符：列的位置上“什么也没有”，要说出它是什么
SPACE_LOOKALIKES = {"\u3000": "全角空格", "\u00a0": "不换行空格", "\u200b": "零宽空格"}   # 开头的 BOM 另有一条说明

# json 模块的英文报错 → 给学生看的中文说明
JSON_ERRORS = {
    "Expecting value": "这里缺少一个值",
    "Expecting ',' delimiter": "这里应当是逗号「,」",
    "Expecting ':' delimiter": "这里应当是冒号「:」",
    "Expecting property name enclosed in double quotes": "这里应当是用双引号括起来的字段名",
    "Unterminated string starting at": "从这里开始的字符串没有结尾的双引号",
    "Invalid control character at": "字符串里直接出现了换行或控制字符",
    "Extra data": "JSON 内容结束后还有多余的文字",
    "Invalid \\escape": "反斜杠「\\」后面的转义写法不合法",
    "Unexpected UTF-8 BOM": "文件开头多了一个看不见的 BOM（\\ufeff）",   # 学生的文件到不了这里（decode_student_file 先说了），不另给提示
}


def describe_json_error(text, error):
    """把 json 的报错换成中文，猜一猜常见失误。'[{"id": "A1"},]' -> (1, 14, "这里多了一个逗号", "…删掉它")。"""
    pos, message = error.pos, error.msg
    before = text[:pos].rstrip()
    what = next((cn for en, cn in JSON_ERRORS.items() if message.startswith(en)), message)
    char = text[pos:pos + 1]
    hint = None
    repair = string_repair(text, pos, message) if message.startswith(STRING_TROUBLE) else None
    if message.startswith("Illegal trailing comma") or (before.endswith(",") and char != "" and char in "]}"):
        pos = len(before) - 1 if before.endswith(",") else pos   # 各 Python 版本都指向这个逗号
        what, hint = "这里多了一个逗号", "数组或对象的最后一项后面不能再写逗号，删掉它"
    elif not text[pos:].strip(JSON_SPACE) and not message.startswith(("Unterminated string", "Invalid control character")):
        pos = len(text.rstrip(JSON_SPACE))   # 指向最后一个字符之后，而不是文件末尾的空行（全角空格不是 JSON 的空白，另有提示）
        what, hint = "文件在这里意外结束", "可能少了结尾的「]」或「}」"
    elif repair:   # 引号敲成全角、结尾的 " 漏了、反斜杠转义了它：试过的改法（在“全角字符”之前：正文里的“ 不是错）
        hint = repair
    elif char in FULL_WIDTH:
        hint = f"这里是全角字符「{char}」，JSON 的标点要用半角的「{FULL_WIDTH[char]}」（切换到英文输入法再输入）"
    elif char in SPACE_LOOKALIKES:
        hint = f"这里有一个看不见的{SPACE_LOOKALIKES[char]}（\\u{ord(char):04x}），JSON 只认半角空格：删掉它，要空开就敲一个半角空格"
    elif char.isalpha() and message.startswith(("Expecting value", "Expecting property name")):   # 值不会以字开头（true/false/null 除外）
        word = re.match(r"\w*", text[pos:]).group().lower()
        hint = ("JSON 里只有小写的 true、false、null：Python 的 True、False 要写成小写，None 写成 null" if word in ("true", "false", "none", "null")
                else "字符串和字段名都要用双引号「\"」括起来：这里的文字前面少了「\"」")
    elif char == ":" and message.startswith("Expecting ',' delimiter") and \
            [bracket for bracket, _ in scan_json(text, 0, pos)[0]][-1:] == ["["]:   # 数组里出现了“字段名: 值”：这一项的「{」删掉了
        what, hint = "这里在数组「[」里，却写了「字段名: 值」", "这条记录开头的「{」可能删掉了：补上它"
    elif message.startswith("Extra data") and char == ",":   # 最外层的值已经结束，后面又写了逗号：看后面和开头是什么
        hint = ("最外层的值后面多了一个逗号：删掉它" if not text[pos + 1:].strip() else
                "最外层只能有一个值：资料文件是一个数组 [ {…}, {…} ]，开头的「[」可能删掉了；回答文件、域名名单只有一个 {…}，"
                "把后面多写的删掉" if text.lstrip(JSON_SPACE).startswith("{") else "最外层的数组在这里之前就关上了：前面可能多写了一个「]」")
    elif char == "'":
        hint = "JSON 的字段名和字符串要用双引号「\"」，不能用单引号「'」"
    elif char in ("/", "#"):
        hint = "JSON 不支持注释（// 、/* */ 或 #），请删掉注释"
    elif char == "}" and before.endswith("[") and message.startswith("Expecting value"):   # 删记录只删了开头，剩下它的「},」
        what = "这里多了一个「}」"
        hint = "删一条记录时可能只删了一半：把它从「{」到「},」整段删掉，或补回它的开头"
    elif char == "," and message.startswith("Expecting value"):
        what, hint = "这里多了一个逗号", "两项之间只要一个逗号，数组开头也不能有逗号，删掉它"
    elif char == "{" and message.startswith("Expecting property name"):
        hint = "上一条记录可能少了结尾的「}」"
    elif message.startswith("Expecting ',' delimiter") and char in "]}":   # 右括号来得不是时候：看还没关上的括号，照实说
        what, hint = describe_unmatched(text, pos, char)
    elif message.startswith("Expecting ',' delimiter") and text[pos - 1:pos] == '"':
        hint = "可能是上一项少了逗号「,」；如果是正文里写了英文双引号，请写成 \\\" 或换成中文引号“”"
    elif message.startswith("Expecting ',' delimiter"):
        hint = "上一项的末尾可能漏了逗号「,」"
    elif message.startswith(("Unterminated string", "Invalid control character")):
        hint = "检查字符串结尾是否漏了双引号「\"」；正文里要换行请写 \\n"
    elif message.startswith("Invalid \\escape"):
        hint = "要写反斜杠本身，请写成 \\\\；要换行写 \\n（反斜杠和 n 之间没有空格）"
    return (*line_and_column(text, pos), what, hint)


def string_repair(text, pos, message):
    """字符串在不该结束的地方结束了（或一直没结束）时，试改法，返回说明改法的提示；没有改法能让文件读过这一带时是 None
    （不猜）。和 describe_unmatched 一样，说的每种改法都在文件上试过：
    - 全角右引号：这个字符串里还有没关上的全角左引号（“设置”），它是正文里的引号，试着在它后面补上半角的 "；
      否则它像是敲成全角的 JSON 引号，试着把它连同紧跟着的全角标点换成半角（”、 → ",   ”：“ → ":"）；
    - 「\\"」：反斜杠把结尾的引号变成了普通字符（"C:\\"），试着写成「\\\\"」；
    - 最后试一次把这一行所有像敲错的全角引号都换掉（整个键值都是用中文输入法打的）。
    从出错处找起（字符串一直没结束时往后，别的往前），最多试 20 处，每试一处就是把文件读一遍。
    整个文件读得通的改法说“试过了”；读过了下一行的（文件里还有别的错）也说，但不说能读通。"""
    first = text.rfind("\n", 0, max(text.rfind("\n", 0, pos), 0)) + 1   # 上一行的开头
    last = line_end(text, pos)   # 这一行的末尾
    after_next = line_end(text, last + 1)   # 下一行的末尾
    if message.startswith("Unterminated string"):   # pos 是这个字符串开头的引号：毛病在它后面
        spots = [index for index in range(pos + 1, last) if is_repair_spot(text, index)]
    else:
        spots = [index for index in range(min(last, pos + 1) - 1, first - 1, -1) if is_repair_spot(text, index)]
    whole_line, advice = text, []
    for index in sorted(spots[:20], reverse=True):   # 从后往前换：前面的位置不会因为后面的改动而挪动
        if not in_text_quote(whole_line, index):   # 正文里的引号后面补 "，不算“敲错的全角引号”，不一起换
            whole_line, said = one_repair(whole_line, index)
            advice = [said] + advice
    # 先试全都换掉的那一种：“试用”，“体验版”，“几天”只换最后一个也读得通，却把三个关键词并成了一个
    tries = ([(whole_line, "；".join(advice))] if len(advice) > 1 else []) + [one_repair(text, index) for index in spots[:20]]
    reached = [(how_far_it_reads(repaired), repaired, said) for repaired, said in tries]
    whole = [said for far, repaired, said in reached if far > len(repaired)]
    if whole:
        return whole[0] + "（试过了：这样改完，整个文件就能读通）"
    far, repaired, said = max(reached, key=lambda item: item[0], default=(0, "", None))
    # 文件里另有别的错：改完以后越过出错处、又读了至少 5 个字（空白不算）才算这一处改对了——正文里的换行，补上引号以后
    # 马上又在下一行的第一个字上出错，那不是改对了
    if far > after_next or len("".join(repaired[pos:far].split())) >= 5:
        return said + "（试过了：这样改完，这里就读得过去了，后面还有别的错）"
    return None


def line_end(text, index):
    """index 所在的这一行在哪里结束（换行符的位置；最后一行是 len(text)）。"""
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def is_repair_spot(text, index):
    return text[index] in CLOSING_QUOTES or text.startswith('\\"', index)


def in_text_quote(text, index):
    """index 处的全角右引号是不是正文里的引号：这个字符串到它为止，还有没关上的、和它配对的全角左引号（“设置”）。"""
    opener = CLOSING_QUOTES.get(text[index])
    started = scan_json(text, text.rfind("\n", 0, index) + 1, index)[1]   # JSON 的字符串不跨行：从这一行的开头数起
    string = text[index if started is None else started:index]   # 这个字符串到这里为止的内容
    return bool(opener) and string.count(opener) > string.count(text[index])


def one_repair(text, index):
    """在 index 处的一种改法：(改过的文字, 说明)。说明里的行号、列号是改之前的。"""
    line, column = line_and_column(text, index)
    char = text[index]
    if char == "\\":
        return (text[:index] + "\\" + text[index:],
                f"第 {line} 行第 {column} 列的「\\\"」是一个普通的引号，字符串没有在那里结束：要写反斜杠本身，请写成「\\\\」")
    if in_text_quote(text, index):
        return (text[:index + 1] + '"' + text[index + 1:],
                f"字符串没有结束：第 {line} 行第 {column} 列的「{char}」是正文里的引号，在它后面补上半角的「\"」")
    end = index + 1   # 连同紧跟着的全角标点、空格一起换（输入法常一起打出来）
    while end < len(text) and text[end] != "\n" and (text[end] in FULL_WIDTH or text[end] in " \t:,"):
        end += 1
    stretch = text[index:end].rstrip(" \t:,")
    fixed = "".join(FULL_WIDTH.get(mark, mark) for mark in stretch)
    return text[:index] + fixed + text[index + len(stretch):], f"第 {line} 行第 {column} 列的「{stretch}」要写成半角的「{fixed}」"


def line_and_column(text, pos):
    """text 里第 pos 个字符在第几行第几列（都从 1 数起，列按字符算）。"""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def scan_json(text, start, end):
    """从 start 读到 end，字符串里的括号、转义的 \\" 都不算：返回 (还没关上的「[」「{」，从外到里 [(括号, 位置)]，
    读到 end 时还没结束的字符串从哪里开始（开头引号的下一个字；不在字符串里时是 None))。"""
    opened, string, escaped = [], None, False
    for index in range(start, end):
        char = text[index]
        if string is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                string = None
        elif char == '"':
            string = index + 1
        elif char in "[{":
            opened.append((char, index))
        elif char in "]}" and opened:
            opened.pop()
    return opened, string


def describe_unmatched(text, pos, char):
    """pos 处的右括号 char 关不上最里面那个还开着的括号（json 说这里要逗号）。不猜是哪种手误：三种改法——在它前面补上
    缺的右括号、把它换成该写的那个、删掉它——各在文件上试一遍，哪一种让文件读得最远就说哪一种（一样远时按这个顺序）；
    改完能读通的，提示里说一声。只看括号开没开会把多写的「]」说成“少了「}」”：照着补了又报别处，学生会来回打转。
    返回 (what, hint)。"""
    opened = scan_json(text, 0, pos)[0]
    pair = {"]": "[", "}": "{"}[char]
    inner = opened[-1] if opened else None
    closer = {"[": "]", "{": "}"}[inner[0]] if inner else None
    fixes = []   # (改过的文字, what, hint)
    if closer:
        line, column = line_and_column(text, inner[1])
        if any(bracket == pair for bracket, _ in opened):   # 它能关上外面的某一个：中间那个可能少了右括号
            fixes.append((text[:pos] + closer + text[pos:], f"这里之前少了「{closer}」",
                          f"第 {line} 行第 {column} 列的「{inner[0]}」还没有关上，就先写了「{char}」：在它前面补上「{closer}」"))
        fixes.append((text[:pos] + closer + text[pos + 1:], f"这里应当是「{closer}」，写成了「{char}」",
                      f"它要关上第 {line} 行第 {column} 列的「{inner[0]}」：把「{char}」换成「{closer}」"))
    fixes.append((text[:pos] + text[pos + 1:], f"这里多了一个「{char}」", "删掉它"))
    far, fixed, what, hint = max(((how_far_it_reads(fix[0]), *fix) for fix in fixes), key=lambda tried: tried[0])
    if far > len(fixed):
        return what, hint + "（试过了：这样改完，整个文件就能读通）"
    return what, hint + (f"；要接着写，就写逗号「,」或「{closer}」" if hint == "删掉它" and closer else "")


def how_far_it_reads(text):
    """json 读 text 能读到第几个字符才出错；整个读通时是 len(text) + 1。括号都对得上、却另有 parse_json 会拒绝的毛病
    （NaN、超长的整数、嵌套太深）时是 len(text)：这种改法最好，但不能说“改完就能读通”。"""
    def refuse(name):
        raise ValueError(name)
    try:
        json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as error:
        return error.pos
    except (RecursionError, ValueError):
        return len(text)
    return len(text) + 1


def describe_redirect(status, location, target):
    """3xx：说清服务器想让请求去哪里（只说主机），以及程序没有去。"""
    import urllib.parse
    where = "要求重定向，但没有给出新地址"
    if location:
        try:
            netloc = urllib.parse.urlsplit(urllib.parse.urljoin(target["url"], location.strip())).netloc
        except ValueError:
            netloc = ""
        where = f"要求转到 {one_line(netloc.rpartition('@')[2]) or '一个看不懂的地址'}"
    hint = ("DeepSeek 的官方地址不会这样回答，请检查网络环境" if target["official"] else
            "核对 LOCAL_MODEL_URL 是否写对（通常以 /v1 结尾）")
    return f"服务器{where}（HTTP {status} 重定向）；程序不跟随重定向，没有向那里发送任何内容，{hint}"


# HTTP 错误码 → 原因和该做什么（依据 DeepSeek 官方错误码说明；502、504 是网关和代理常回的，按 HTTP 标准的意思说）
HTTP_ERRORS = {
    400: "请求格式有误（HTTP 400）：通常是程序或参数的问题，请核对模型名和请求内容",
    401: "密钥无效（HTTP 401）：检查 DEEPSEEK_API_KEY 是否完整，或到平台重新创建密钥",
    402: "账户余额不足（HTTP 402）：请到 DeepSeek 平台充值后再试",
    404: "接口地址不存在（HTTP 404）",
    408: "服务器等得太久，自己放弃了这次请求（HTTP 408）：稍等片刻后手动重试",
    422: "请求参数无效（HTTP 422）：常见原因是模型名不存在，用 DEEPSEEK_MODEL 改成平台当前列出的型号",
    429: "请求太频繁（HTTP 429）：达到了速率或并发上限，请稍后手动重试",
    500: "服务器内部错误（HTTP 500）：稍等片刻后手动重试",
    502: "网关出错（HTTP 502）：服务器前面的网关或代理没能从后面的服务拿到回答，稍等片刻后手动重试",
    503: "服务器繁忙（HTTP 503）：稍等片刻后手动重试",
    504: "网关超时（HTTP 504）：服务器前面的网关或代理等后面的服务超时了，稍等片刻后手动重试",
}

# 本机模型没有 DeepSeek 的账户；这几种错误的原因换一种说法（第 02 课的表里有各种本机服务的情况）
LOCAL_HTTP_ERRORS = {
    400: "请求被本机服务拒绝（HTTP 400）：核对 LOCAL_MODEL_NAME，以及该服务是否支持 JSON 模式",
    401: "本机服务要求认证（HTTP 401）：用 LOCAL_MODEL_API_KEY 设置它要的密钥",
    403: "本机服务拒绝了请求（HTTP 403）：检查 LOCAL_MODEL_API_KEY 是否正确",
    404: "本机服务上找不到地址或模型（HTTP 404）：LOCAL_MODEL_URL 通常以 /v1 结尾；确认 LOCAL_MODEL_NAME 的模型已下载",
    408: "本机服务等它后面的模型等得太久，自己放弃了（HTTP 408）：--timeout 管不到它，调大本机服务（代理）自己的超时设置",
    422: "请求参数无效（HTTP 422）：核对 LOCAL_MODEL_NAME",
    500: "本机服务内部出错（HTTP 500）：看看运行本机服务的窗口里的报错",
    502: "本机的代理没能从它后面的模型服务拿到回答（HTTP 502）：看看代理窗口里的报错，确认模型服务已经启动",
    504: "本机的代理等它后面的模型服务超时了（HTTP 504）：看看代理窗口里的报错，确认模型服务已经启动",
}

# 服务器的 400 报错里出现这些词时，换一句更具体的说明（第二条是在 LiteLLM 代理上实测的：密钥和 master key 不一致）
SERVER_HINTS = {
    ("not support", "unsupported", "unknown parameter", "unrecognized", "extra inputs are not permitted",
     "unexpected keyword"): "服务器说它不支持请求里的某个参数",
    ("no connected db",): "LiteLLM 代理这样回答，通常是 LOCAL_MODEL_API_KEY 和它的 master key 不一致",
}


def describe_http_failure(status, headers, data, target):
    detail = describe_server_message(data).rstrip("。.")   # 后面还要接“。”
    local_table = {} if target["official"] else LOCAL_HTTP_ERRORS
    what = local_table.get(status) or HTTP_ERRORS.get(status, f"服务器返回 HTTP {status}")
    specific = [hint for words, hint in SERVER_HINTS.items() if any(word in detail.casefold() for word in words)]
    if status == 400 and specific:   # 服务器的原话指明了原因，就先说它，不让学生先去查别的
        what = f"请求被{'服务器' if target['official'] else '本机服务'}拒绝（HTTP 400）：{specific[0]}"
    if status == 400 and "context" in detail.casefold():   # llama.cpp：maximum context length is 512 tokens … requested 3068
        numbers = "、".join(dict.fromkeys(re.findall(r"\d+(?= ?tokens)|(?<=requested )\d+", detail))) or "见服务器的原话"
        what = (f"请求被拒绝（HTTP 400）：模型的上下文窗口放不下这次的请求（服务器说的 token 数：{numbers}）；"
                "换上下文更大的模型，或启动本机服务时调大上下文长度")
    if status == 401 and not target["official"] and target.get("sent_key"):   # 密钥发了，被拒绝：不是“没设置”
        what = "本机服务拒绝了 LOCAL_MODEL_API_KEY 里的密钥（HTTP 401）：核对它和服务启动时设置的密钥是否一致"
    if status == 500 and not target["official"] and not target.get("sent_key"):   # 实测：LiteLLM 代理没收到密钥也回 500
        what += "；LiteLLM 代理缺少密钥时也这样回答，可以试试设置 LOCAL_MODEL_API_KEY"
    if status == 500 and detail:   # 服务器自己说了原因：先说它
        return f"{'服务器' if target['official'] else '本机服务'}内部出错（HTTP 500），服务器说：{detail}。{what.split('：', 1)[-1]}"
    if status in (400, 404, 422):
        what += f"（当前模型：{target['model']}）"
    retry_after = one_line(headers.get("retry-after", ""))
    if status == 429 and retry_after:
        seconds = whole_number(retry_after) is not None
        what += f"；服务器建议等 {retry_after} 秒" if seconds else f"；服务器建议在 {retry_after} 之后再试"
    return what + (f"。服务器说：{detail}" if detail else "")


def reported_finish_reason(choice):
    """choices[0] 的 finish_reason。LiteLLM 代理把它不认识的值改写成 stop，原话留在 provider_specific_fields 的
    native_finish_reason 里（1.108.7 实测）；DeepSeek 的 insufficient_system_resource 就是这样被改掉的：原话是它时以原话为准，
    否则资源不足、没写完的回答会当成写完了。别的原话（比如 Anthropic 的 end_turn）本来就是写完了，照用代理给的 stop。"""
    extra = choice.get("provider_specific_fields")
    native = extra.get("native_finish_reason") if isinstance(extra, dict) else None
    return native if native == "insufficient_system_resource" else choice.get("finish_reason")


STREAMING_TYPES = ("text/event-stream", "application/x-ndjson")   # SSE（OpenAI 兼容接口的流式）和 Ollama 自己接口的流式


def response_text(headers, data):
    """200 的响应体：先确认它完整、没压缩、是 UTF-8，再交给 JSON 解析。"""
    declared = whole_number(headers.get("content-length", ""))
    if declared is not None and len(data) < declared:
        raise BadResponse(f"响应不完整：说好 {declared} 字节，只收到 {len(data)} 字节就断开了")
    encoding = headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise BadResponse(f"响应是压缩过的（Content-Encoding: {one_line(encoding)}），程序只接受不压缩的 JSON")
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media in STREAMING_TYPES:   # 请求里写了 stream: false，服务器还是一段段地发（有的代理这样）：说清是流式，不只说“不是 JSON”
        raise BadResponse(f"服务器发来的是流式响应（Content-Type: {media}），程序只收一个完整的 JSON（请求里写了不要流式）")
    charset = declared_charset(headers.get("content-type", ""))
    if charset and not is_utf8(charset):
        raise BadResponse(f"响应声明的编码是 {one_line(charset, 40)}（Content-Type 的 charset），程序只接受 UTF-8")
    try:   # 开头的 BOM 不算错（RFC 8259 允许读的一方忽略它），和资料文件一样
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise BadResponse("服务器的响应不是 UTF-8 文本") from None
    if not text.strip():
        raise BadResponse("服务器返回了空的响应体")
    return text


def whole_number(text):
    """服务器给的头里的整数（Content-Length、Retry-After）：只认半角数字，最多 12 位；别的写法（"²"、"-1"、日期）是 None，从不出错。"""
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 12 else None


def is_utf8(charset):
    """utf-8、UTF8、utf_8 都是 UTF-8；ASCII 是它的一部分，也算。"""
    try:
        return codecs.lookup(charset).name in ("utf-8", "ascii")
    except (LookupError, ValueError):   # 不认识的名字；名字里有 NUL 是 ValueError
        return False


def declared_charset(content_type):
    """"application/json; charset=GBK" -> "gbk"；没写 charset 时返回 None。"""
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None


def describe_server_message(data):
    """错误响应里服务器说了什么：JSON 错误对象里的 message，或者纯文本；并成一行（截短在 make_call_failure 里做）。"""
    try:
        return describe_error_object(parse_json(data.decode("utf-8")))
    except JsonProblem:
        text = data.decode("utf-8", errors="replace").strip()
        return "" if text.startswith("<") else one_line(text)   # HTML 错误页只会刷屏，不显示
    except UnicodeDecodeError:
        return ""


def describe_error_object(payload):
    """各家服务器的错误对象写法不同：{"error": {"message"}}、{"error": "…"}、{"message"}、{"detail"}。"""
    if not isinstance(payload, dict):
        return ""
    error = payload.get("error")
    for text in (error.get("message") if isinstance(error, dict) else error, payload.get("message"),
                 payload.get("detail")):
        if isinstance(text, str) and text.strip():
            return one_line(text)
    return ""


# ---------- 没有密钥也能练：检查一份保存的回答（--check-draft） ----------

def decode_student_file(data):
    """学生自己存的文件（资料文件、--check-draft 的回答、--domains 的名单、练习写的 JSON）：字节 → (文字, None)；
    编码不对时是 (None, 中文原因)。记事本的“Unicode”（UTF-16）和“ANSI”（GBK）各说各的，和资料文件的说法一样；
    存了两次 BOM 也说清（读的时候只去掉一个）。"""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, "是 UTF-16 或 UTF-32 编码（记事本里叫“Unicode”），请在编辑器里选择“UTF-8”重新保存"
    try:
        text = data.decode("utf-8-sig")   # utf-8-sig：记事本写的一个 BOM 也接受
    except UnicodeDecodeError as error:   # 中文 Windows 的记事本“ANSI”就是 GBK
        line = data.count(b"\n", 0, error.start) + 1
        return None, (f"不是 UTF-8 编码（第 {line} 行有无法解码的字节 0x{data[error.start]:02X}，可能是用 GBK/ANSI 保存的），"
                      "请在编辑器里选择“UTF-8”重新保存")
    if "\x00" in text:   # 没有 BOM 的 UTF-16 也能“解码”成 UTF-8，只是满是 NUL
        return None, "不是 UTF-8 编码（里面有 NUL 字符，像是 UTF-16），请在编辑器里选择“UTF-8”重新保存"
    if not text.strip():   # 空文件不是写坏了一半：不说“可能少了「]」”
        return None, "是空的：还没有写内容，或保存时没存上"
    if text.startswith("\ufeff"):
        return None, "开头存了两个看不见的 BOM（\\ufeff），请在编辑器里另存为“UTF-8”（不带 BOM）"
    return text, None


def read_saved_reply(path):
    """--check-draft：读一份保存的回答，包装成和模型的回复（generate() 的返回值）一样的样子
    {"content", "finish_reason": "stop"}，接下来和真正的回复一样交给 checked_answer()。
    不请求模型，不读密钥；读不了的文件也算被拒绝的回答（NoAnswer，退出码 4），和模型交回一份坏回答一样处理。
    第 02 课的 model_reply_assistant.py 和 retrieval_qa.py（第 03–05 课、第 07 课的 --web）都用它实现 --check-draft。"""
    print(f"检查保存的回答 {one_line(path)}（不调用模型，不读取密钥）", file=sys.stderr)
    try:
        data = read_head(path, MAX_RESPONSE_BYTES)   # 和模型响应体一样，最多 1 MiB；文件夹、命名管道不打开
    except OSError as error:   # 从别的文件夹运行时最常见：相对路径是从当前文件夹算的
        where = "；相对路径从当前文件夹算起" if isinstance(error, FileNotFoundError) and not os.path.isabs(path) else ""
        raise make_rejection(f"读不了回答文件 {path}（{describe_os_error(error)}{where}）") from None
    if len(data) > MAX_RESPONSE_BYTES:
        raise make_rejection(f"回答文件 {path} 超过 1 MiB")
    content, problem = decode_student_file(data)
    if problem:
        raise make_rejection(f"回答文件 {path} {problem}")
    return {"content": content, "finish_reason": "stop"}


def read_head(path, limit, follow_links=True):
    """读一个普通文件的前 limit + 1 个字节（多读一个，才知道是不是超过了 limit）。套件从磁盘读的文件都经过这里。
    先看它是什么再打开：文件夹、命名管道、设备都不打开（打开没人写的命名管道会一直等下去）；follow_links=False 时
    链接也不打开（搜索缓存）。失败时抛出 OSError 的子类，describe_os_error() 能把它说成中文。"""
    mode = (os.stat if follow_links else os.lstat)(path).st_mode   # 找不到、没有权限（包括上层文件夹不让进）都在这里报出来
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "这是一个文件夹", path)
    if stat.S_ISLNK(mode):
        raise OSError(errno.ELOOP, "这是一个链接", path)
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "不是普通文件，像是命名管道或设备", path)
    with open(path, "rb") as handle:
        return handle.read(limit + 1)


def describe_os_error(error, writing=False):
    """把常见的文件错误说成中文（writing=True：是在写文件时出的错）；其他的保留系统原话。"""
    reasons = {FileNotFoundError: "它所在的文件夹不存在" if writing else "文件不存在", IsADirectoryError: "这是一个文件夹",
               PermissionError: "没有写入权限" if writing else "没有读取权限", NotADirectoryError: "路径中间有一段不是文件夹"}
    if error.errno == errno.ENOSPC:   # 和 stdout 写不出去时的说法一样（output_lost）
        return "设备或磁盘已满"
    if error.errno == errno.ELOOP:   # 不跟着走的链接（搜索缓存、read_head），或者跟着走却绕成了圈
        return "这是一个链接，程序不跟着它走" if writing or error.strerror == "这是一个链接" else "链接绕成了圈（或一层套一层太多），找不到真正的文件"
    return next((text for kind, text in reasons.items() if isinstance(error, kind)), error.strerror or str(error))


# ---------- 命令行：三个脚本共用的外壳（退出码、报错、解析命令行、入口），和本课的 run() ----------

# 0 正常，1 需要人工复核，2 用法或资料文件错误，3 模型调用失败，4 模型回答被拒绝，5 结果写不出去（stdout 被关掉、磁盘满、读的一方走了），130 被中断
EXIT_OK, EXIT_REVIEW, EXIT_USAGE = 0, 1, 2
EXIT_MODEL_FAILED, EXIT_REJECTED, EXIT_OUTPUT, EXIT_INTERRUPTED = 3, 4, 5, 130


class KitError(Exception):
    """学生能看懂、能处理的问题：一行中文说明和一个退出码，不打印 traceback。"""
    def __init__(self, message, exit_code=EXIT_USAGE):
        super().__init__(message)
        self.exit_code = exit_code


def error_line(message):
    """所有报错的格式：“错误：”加一句话。例：error_line("问题是空的。") 得到 “错误：问题是空的。”"""
    return "错误：" + " ".join(message.splitlines())   # 别人给的文字（选项、路径）里有换行，报错也只是一行


def make_kit_error(message, exit_code=EXIT_USAGE):
    """所有报错都从这里出来：一行 error_line(message) 和一个退出码。"""
    return KitError(error_line(message), exit_code)


class NoAnswer(KitError):
    """没有得到能用的回答（这一课和后面几课都这样报告）。status 是 "error"（调用失败，退出码 3）或 "rejected"（回答被拒绝，退出码 4）；
    problems 是给人看的原因，model_called 说请求有没有发出去；exchange：请求发出去以后才失败的那一来一回（见 generate），--trace 用。"""
    exchange = None

    def __init__(self, status, problems, model_called=True, raw=None):
        problems = [" ".join(problem.splitlines()) for problem in problems]   # 别人给的文字（路径、服务器的话）里有换行，每条原因也只是一行
        if status == "error":
            message = error_line(problems[0])   # 调用失败和别的错误一个格式：“错误：……”
        else:
            message = "回答被拒绝：" + "；".join(problems)
            if raw is not None:   # 模型原本写了什么：排查时有用，但不能当作结果
                message += f"\n原始回答（仅供排查，不要使用）：{one_line(raw, 200) or '（空）'}"
        super().__init__(message, EXIT_MODEL_FAILED if status == "error" else EXIT_REJECTED)
        self.status, self.problems, self.model_called = status, problems, model_called


def closest(word, choices, cutoff=0.6):
    """拼错的选项名或字段名：返回最像的那个（相似度至少 cutoff），没有就返回 None。"""
    import difflib   # 只在出错时才需要
    return next(iter(difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)), None)


IME_DASHES = "—–―－−‐‑﹣"   # 中文输入法（和从网页复制来的命令）会把 -- 打成这些横线：破折号、全角的 －、减号 −、连字符 ‐


def parse_command_line(argv, usage, flags=None, value_options=None):
    """手写的小解析器（报错全是中文）。flags 是开关，value_options 后面跟一个值（也可以写 --名字=值），问题只有一个，-- 之后的都算问题。
    有 -h、--help 就显示帮助；不然说出第一处错：不认识的选项（猜一个）、缺值或空值、同一个选项写了两个不同的值、别的横线（dash_problem）、多出来的参数。
    例：(["--retrieve-only", "试用几天？"], USAGE, {"--retrieve-only": "retrieve_only"}) -> {"question": "试用几天？", …}"""
    flags = dict(flags or {}, **{"-h": "help", "--help": "help"})
    value_options = value_options or {}
    options = {"question": None, **{name: False for name in flags.values()}, **{name: None for name in value_options.values()}}
    pending, only_positional, problems = list(argv), False, []
    while pending:
        arg = pending.pop(0)
        name, has_value, value = arg.partition("=")
        if arg == "--" and not only_positional:
            only_positional = True
        elif only_positional or not arg.startswith("-") or arg == "-":
            problems.append(None if only_positional else dash_problem(arg, [*flags, *value_options]))
            if options["question"] is not None:
                problems.append(f"多了一个参数「{arg}」（问题里有空格时，请用引号把整个问题括起来）")
            options["question"] = options["question"] or arg   # 多出来的参数已经记成错了：留着第一个
        elif name in flags and not has_value:
            options[flags[name]] = True
        elif name in value_options:
            value = value if has_value else pending.pop(0) if pending and pending[0].partition("=")[0] not in (*flags, *value_options) else None
            first, options[value_options[name]] = options[value_options[name]], value
            problems.append(f"{name} 后面缺少一个值" if value is None else
                            f"{name} 的值是空的（用了没有设置的变量？）" if not value.strip() else   # --documents "" 多半是变量没有设置
                            f"{name} 写了两次（{visible(first)} 和 {visible(value)}），不知道该用哪一个：只留一个" if first and first != value else None)
        else:
            close = closest(name, [*flags, *value_options])
            hint = f"（是不是想写 {close}？）" if close else "（问题以「-」开头时，前面先写 -- ）" if not arg.isascii() or " " in arg else ""
            problems.append(f"不认识的选项 {arg}{hint}")   # “-1 天能退款吗”：以横线开头的问题
    problem = next((problem for problem in problems if problem), None)
    if problem and not options["help"]:
        raise make_kit_error(f"{problem}。{usage}")
    return options


def dash_problem(arg, names):
    """arg 是用别的横线写的选项（names 里的哪一个，字母拼错了也猜一个）时，返回一句说明；不是时 None。横线后面只能是选项的样子
    （英文字母、数字、连字符，可以带 =值）：“—documents里写什么？”“——试用几天？”是以破折号开头的问题，照旧是问题。"""
    name = "--" + arg.lstrip(IME_DASHES + "-").partition("=")[0]
    if arg[:1] not in IME_DASHES or not re.fullmatch(r"--[A-Za-z][A-Za-z0-9-]+", name):
        return None
    meant = name if name in names else closest(name, names)
    return f"{arg} 的横线不是半角的「-」（中文输入法打的，或从网页复制来的）：要写 {meant}（切换到英文输入法再输入）" if meant else None


def use_utf8_streams():
    """Windows 控制台和管道里也按 UTF-8 收发中文。stderr 被关掉（2>&-）时，提示和警告写进空设备：
    不然 print(file=None) 会把它们写到 stdout，混进 JSON。"""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")
    if sys.stdin is not None and hasattr(sys.stdin, "reconfigure") and not sys.stdin.isatty():
        sys.stdin.reconfigure(encoding="utf-8")


MAX_QUESTION_CHARS = 2000   # 和草稿逐句核对的上限一样：再长就不像一个问题了


def checked_question(question):
    """去掉首尾空白的问题。去掉空白和看不见的字符（零宽、方向控制……）以后什么也不剩，就是空问题（用法错误）。"""
    question = question.strip()
    if len(question) > MAX_QUESTION_CHARS:   # 客户的问题不会这么长；更长的多半是把文件粘进来了
        raise make_kit_error(f"问题有 {len(question)} 个字，超过上限 {MAX_QUESTION_CHARS} 字。请只写问题本身。")
    if any("\udc80" <= char <= "\udcff" for char in question):   # 命令行或管道送来的字节不是 UTF-8（Python 把它们记成这样的代用字符）
        raise make_kit_error("问题里有不是 UTF-8 的字节（终端或文件的编码不对？）。请换成 UTF-8 再试。")
    if not any(char.isprintable() and not char.isspace() for char in fold(question)):   # fold 去掉看不见的字符（零宽、填充字……）
        raise make_kit_error("问题是空的。请输入一个问题，例如：试用几天？")
    return question


def ask_question(prompt="问题："):
    """在 stderr 上提示，从 stdin 读一行；来自管道时把读到的问题回显出来，看起来和在终端里输入一样。"""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    limit = 4 * MAX_QUESTION_CHARS   # 最多读上限的四倍（前后的空白也算在里面）：灌进来几十 MB，也不先整个读进内存再说太长
    try:
        line = sys.stdin.readline(limit + 2) if sys.stdin is not None else ""
    except UnicodeDecodeError:
        sys.stderr.write("\n")
        raise make_kit_error("从标准输入读到的问题不是 UTF-8 文本。提示：把问题直接写在命令后面，例如 … 试用几天？") from None
    if sys.stdin is None or not sys.stdin.isatty() or not line:   # 管道输入或 Ctrl-D：补上回显和换行
        echoed = line.rstrip("\r\n").lstrip("\ufeff")   # Windows 管道开头的 BOM 不回显：和 JSON 里的 question 一样去掉
        too_long = len(echoed.strip()) > MAX_QUESTION_CHARS   # 超过上限的（把文件整个灌进来了）只回显开头；量法和 checked_question 一样
        sys.stderr.write((one_line(echoed, 40) if too_long else echoed) + "\n")
    if len(line) > limit and not line.endswith("\n"):   # 读到 limit 还没有读完这一行
        raise make_kit_error(f"问题超过 {limit} 个字，超过上限 {MAX_QUESTION_CHARS} 字。请只写问题本身。")
    return line.lstrip("\ufeff")


def run_cli(run, argv=None):
    """三个脚本共用的入口：UTF-8 输出，写出去的一切都经过 ShownSafely；KitError 变成一行中文和它的退出码；Ctrl-C 退出 130；
    结果写不出去时退出码 5（见 output_lost），绝不是 1：调用的脚本会以为有一份待复核的草稿。"""
    use_utf8_streams()
    shown_safely()   # 写出去的一切都经过 ShownSafely：对终端安全、不带密钥
    if sys.stdout is None:   # 启动时 stdout 就被关掉了（>&-）：结果没处写，什么也不做（不读密钥、不调用模型）
        print(error_line("标准输出被关掉了，结果没处可写，什么也没做。"), file=sys.stderr)
        return EXIT_OUTPUT
    try:
        code = run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()
        return code
    except KitError as error:
        print(error, file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("\n已中断（Ctrl-C）。", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as error:
        if error.filename is not None:   # 读写某个文件失败却没被转成中文说明：这是 bug，照常报出来
            raise
        return output_lost(error)


def output_lost(error):
    """往 stdout 写失败了：磁盘满（> /dev/full）、读的一方走了（… | head）。读的一方自己走的就安静地走，
    别的原因在 stderr 上说一句；stdout 换成空设备，免得退出时冲缓冲区再报一次错。返回退出码 5。"""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):   # stdout 不是真的文件（检查里换成了 StringIO）
        pass
    if not isinstance(error, BrokenPipeError):
        reason = {errno.ENOSPC: "设备或磁盘已满"}.get(error.errno, "系统说")
        print(error_line(f"写不了输出：{reason}（{error.strerror or error}）。"), file=sys.stderr)
    return EXIT_OUTPUT


USAGE = "用法：python3 model_reply_assistant.py [问题] [--timeout 秒 | --check-draft 文件]；详见 --help。"


def parse_timeout(text):
    """--timeout 的值：大于 0、不超过 3600 的秒数；省略时用默认值。它不碰网络模块，retrieval_qa.py 启动时就能检查。"""
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 3600:
        raise make_kit_error(f"--timeout 应当是大于 0、不超过 3600 的秒数，实际是 {text}。")
    return seconds


ENVIRONMENT_HELP = f"""\
环境变量：
  DEEPSEEK_API_KEY     DeepSeek 密钥；没有设置时用不回显的方式询问，终端无法隐藏输入就停下
  DEEPSEEK_MODEL       模型名，默认 {DEFAULT_MODEL}
  LOCAL_MODEL_URL      改用本机的 OpenAI 兼容模型，例如 http://127.0.0.1:11434/v1（只接受本机地址；不读 DeepSeek 密钥）
  LOCAL_MODEL_NAME     本机模型的名字，例如 qwen2.5:7b
  LOCAL_MODEL_API_KEY  本机服务要求的密钥（LiteLLM 代理、vLLM 的 --api-key 等），可以不设；只发给本机地址

官方地址固定为 {ENDPOINT}，不使用系统代理，不跟随重定向，证书校验始终开启。
"""   # retrieval_qa.py 的 --help 也用这一段


HELP = f"""\
用法：python3 model_reply_assistant.py [问题] [--timeout 秒 | --check-draft 文件]

基线做法：把三份资料全部发给模型，请它写一份回复草稿，并检查回答。结果以一个 JSON 对象写到 stdout。

  问题                省略时在 stderr 上提示“问题：”，再从标准输入读一行
  --timeout 秒        整个请求的总时限（默认 {DEFAULT_TIMEOUT:g} 秒）；超时不自动重试
  --check-draft 文件  不调用模型、不读密钥：把文件里保存的回答 {{status, draft, sources}} 当作模型的回答来检查
  -h, --help          显示这段说明

{ENVIRONMENT_HELP}退出码：0 正常；2 用法错误；3 模型调用失败；4 模型回答被拒绝；5 结果写不出去；130 被 Ctrl-C 中断。
"""


def run(argv):
    options = parse_command_line(argv, USAGE, value_options={"--timeout": "timeout", "--check-draft": "check_draft"})
    if options["help"]:
        sys.stdout.write(HELP)
        return EXIT_OK
    timeout = parse_timeout(options["timeout"])
    question = checked_question(options["question"] if options["question"] is not None else ask_question())
    saved = options["check_draft"]
    try:
        if saved is not None:   # 没有密钥也能练：保存的回答代替模型的回答，检查完全一样
            answer = checked_answer(read_saved_reply(saved), [material["id"] for material in MATERIALS])
        else:
            answer = ask_model(question, MATERIALS, timeout)
    except NoAnswer as failure:
        print(failure, file=sys.stderr)
        write_json({"question": question, "status": failure.status, "model_called": failure.model_called and saved is None,
                    "draft": None, "sources": [], "evidence": None, "problems": failure.problems})
        return failure.exit_code
    write_json({"question": question, "status": answer["status"], "model_called": saved is None, "draft": answer["draft"],
                "sources": answer["sources"], "evidence": answer["evidence"], "problems": []})
    return EXIT_OK


def main(argv=None):
    return run_cli(run, argv)


if __name__ == "__main__":
    sys.exit(main())
