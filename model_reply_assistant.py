"""第 02 课：真正调用模型。标准库 urllib 发一次 HTTPS 请求，回答必须是合规的 JSON，只能引用发过去的资料。

    $ python model_reply_assistant.py 试用几天？

默认请求 DeepSeek 官方接口，密钥来自环境变量 DEEPSEEK_API_KEY（没有就用不回显的方式询问）。
没有密钥时可以改用本机的 OpenAI 兼容模型（例如 Ollama）：设置 LOCAL_MODEL_URL 和 LOCAL_MODEL_NAME。
失败时不自动重试：一次请求可能已经计费，要不要再试由你决定。
"""
import getpass
import ipaddress
import json
import os
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings

from reply_assistant import (DEFAULT_TIMEOUT, EXIT_MODEL_FAILED, EXIT_OK, EXIT_REJECTED,
                             EXIT_USAGE, KitError, MATERIALS, ask_question, build_messages, describe,
                             explain_json_error, json_object, os_reason, parse_command_line, parse_timeout,
                             run_cli, write_json)

# ---------- 常量 ----------

ENDPOINT = "https://api.deepseek.com/chat/completions"   # 固定的官方地址，不接受其他远程地址
DEFAULT_MODEL = "deepseek-v4-flash"   # deepseek-chat 已于 2026 年停用；型号会变，用 DEEPSEEK_MODEL 覆盖
MAX_TOKENS = 2048            # 回答 JSON 通常不到 300 token；留足余量，免得 JSON 被截断（finish_reason=length）
TEMPERATURE = 0              # 写草稿要稳，不要发挥
MAX_RESPONSE_BYTES = 1024 * 1024   # 响应体最多读 1 MiB，再大就是出了问题
ANSWER_STATUSES = ("draft", "missing")

# HTTP 错误码 → 原因和该做什么（依据 DeepSeek 官方错误码说明）
HTTP_ERRORS = {
    400: "请求格式有误（HTTP 400）：通常是程序或参数的问题，请核对模型名和请求内容",
    401: "密钥无效（HTTP 401）：检查 DEEPSEEK_API_KEY 是否完整，或到平台重新创建密钥",
    402: "账户余额不足（HTTP 402）：请到 DeepSeek 平台充值后再试",
    404: "接口地址不存在（HTTP 404）",
    422: "请求参数无效（HTTP 422）：常见原因是模型名不存在，用 DEEPSEEK_MODEL 改成平台当前列出的型号",
    429: "请求太频繁（HTTP 429）：达到了速率或并发上限，请稍后手动重试",
    500: "服务器内部错误（HTTP 500）：稍等片刻后手动重试",
    503: "服务器繁忙（HTTP 503）：稍等片刻后手动重试",
}
# 本机模型没有密钥和账户；这几种错误的原因换一种说法
LOCAL_HTTP_ERRORS = {
    401: "本机服务要求认证（HTTP 401）：本机模式不发送密钥，请检查本机服务的设置",
    400: "请求被本机服务拒绝（HTTP 400）：核对 LOCAL_MODEL_NAME，以及该服务是否支持 JSON 模式",
    404: "本机服务上找不到地址或模型（HTTP 404）：LOCAL_MODEL_URL 通常以 /v1 结尾；确认 LOCAL_MODEL_NAME 的模型已下载",
    422: "请求参数无效（HTTP 422）：核对 LOCAL_MODEL_NAME",
}

USAGE = "用法：python model_reply_assistant.py [问题] [--timeout 秒]；详见 --help。"
NO_KEY_OPTIONS = "没有密钥时，可以用 LOCAL_MODEL_URL 改用本机模型（见第 02 课），或用 retrieval_qa.py --retrieve-only 只检索。"


# ---------- 第一步：决定请求谁 ----------

def model_target(environ=None):
    """返回 (url, 模型名, 是否需要密钥)。设置了 LOCAL_MODEL_URL 就请求本机模型，否则请求 DeepSeek。"""
    environ = os.environ if environ is None else environ
    local = environ.get("LOCAL_MODEL_URL", "").strip()
    if not local:
        return ENDPOINT, environ.get("DEEPSEEK_MODEL", "").strip() or DEFAULT_MODEL, True
    check_loopback(local)
    name = environ.get("LOCAL_MODEL_NAME", "").strip()
    if not name:
        raise KitError("错误：设置了 LOCAL_MODEL_URL，还需要用 LOCAL_MODEL_NAME 指定本机模型的名字（例如 qwen2.5:7b）。")
    return local.rstrip("/") + "/chat/completions", name, False


def check_loopback(url):
    """本机模型只许在本机：127.0.0.0/8、::1 或 localhost。别的地址在连接之前就拒绝。"""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise KitError(f"错误：LOCAL_MODEL_URL 要以 http:// 开头，例如 http://127.0.0.1:11434/v1，现在是 {url}。")
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise KitError(f"错误：LOCAL_MODEL_URL 只能指向本机（127.0.0.1、::1 或 localhost），"
                       f"现在是 {url}。资料不会发给其他机器。")


def read_api_key():
    """从 DEEPSEEK_API_KEY 读密钥；没有就用 getpass 询问（不回显）。终端藏不住输入时宁可停下。"""
    key = os.environ.get("DEEPSEEK_API_KEY", "").strip()
    if key:
        return key
    no_terminal = KitError("错误：没有设置环境变量 DEEPSEEK_API_KEY，而当前终端无法隐藏输入，"
                           "为了不让密钥显示出来，程序停下了。请先设置 DEEPSEEK_API_KEY 再运行；"
                           f"{NO_KEY_OPTIONS}", EXIT_MODEL_FAILED)
    if sys.platform == "win32" and not (sys.stdin and sys.stdin.isatty()):
        raise no_terminal   # Windows 的 getpass 在 IDE 控制台里可能卡住
    with warnings.catch_warnings():
        warnings.simplefilter("error", getpass.GetPassWarning)   # 藏不住输入时 getpass 只发警告并回显，这里改为停下
        try:
            key = getpass.getpass("DeepSeek API Key（输入不回显）：", stream=sys.stderr).strip()
        except (getpass.GetPassWarning, EOFError, OSError):
            raise no_terminal from None
    if not key:
        raise KitError(f"错误：没有输入密钥。可以先设置环境变量 DEEPSEEK_API_KEY；{NO_KEY_OPTIONS}", EXIT_MODEL_FAILED)
    return key


# ---------- 第二步：发送请求 ----------

def build_request_body(question, materials, model):
    return {
        "model": model,
        "messages": build_messages(question, materials),
        "response_format": {"type": "json_object"},   # JSON 模式：提示词里必须出现 json 和样例
        "thinking": {"type": "disabled"},             # V4 默认开思考，思考会占用 max_tokens
        "max_tokens": MAX_TOKENS,
        "temperature": TEMPERATURE,
        "stream": False,
    }


def send(url, body, headers, timeout):
    """发一次 POST，返回 (HTTP 状态码, 响应头, 响应体字节)。整个过程不超过 timeout 秒。

    DeepSeek 慢的时候会不停地发空行保持连接，单次读取的超时永远不会触发；
    所以让请求在后台线程里进行，这里只等到总时限为止。
    """
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


def open_and_read(url, body, headers, timeout):
    # ProxyHandler({})：不使用系统代理，资料和密钥只发往上面的地址；默认 SSL 上下文会校验证书
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                         urllib.request.HTTPSHandler(context=ssl.create_default_context()))
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, dict(response.headers), read_limited(response)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers or {}), read_limited(error)


def read_limited(response):
    data = response.read(MAX_RESPONSE_BYTES + 1)
    if len(data) > MAX_RESPONSE_BYTES:
        raise ValueError("响应体超过 1 MiB 上限")
    return data


def generate(question, api_key, materials=None, timeout=DEFAULT_TIMEOUT, target=None, trace=None):
    """请模型写草稿。materials 省略时发送基线的三份资料；传入 [{id, title, text}, …] 时只发送这些。

    返回 {"content", "finish_reason", "usage", "model"}；调用失败时抛出 KitError（退出码 3）。
    trace 是 --trace 用的函数：请求和响应各报一行（只有字节数、地址、状态，从不含密钥和正文）。
    """
    started = time.perf_counter()
    url, model, needs_key = target or model_target()
    chosen = MATERIALS if materials is None else [{k: m[k] for k in ("id", "title", "text")} for m in materials]
    body = json.dumps(build_request_body(question, chosen, model), ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if needs_key:
        headers["Authorization"] = f"Bearer {api_key}"   # 密钥只出现在这里
    host = urllib.parse.urlsplit(url).netloc
    if trace:
        trace("请求", started, f"{len(body)} 字节，发往 {host}，模型 {model}")
    started = time.perf_counter()
    try:
        status, response_headers, data = send(url, body, headers, timeout)
    except Exception as error:
        if trace:
            trace("响应", started, "没有收到响应")
        raise KitError(f"错误：{describe_failure(error, url)}。没有自动重试。", EXIT_MODEL_FAILED) from None
    try:
        reply = parse_response(status, response_headers, data, api_key, model, local=not needs_key)
    except KitError:
        if trace:
            trace("响应", started, f"HTTP {status}，{len(data)} 字节，无法使用")
        raise
    if trace:
        usage = reply["usage"] if isinstance(reply["usage"], dict) else {}
        detail = f"HTTP {status}，{len(data)} 字节，finish_reason {str(reply['finish_reason'])[:40]}"   # 服务器给的文字也截短
        if usage:
            detail += f"，token {str(usage.get('prompt_tokens'))[:40]} 输入 + {str(usage.get('completion_tokens'))[:40]} 输出"
        trace("响应", started, detail)
    return reply


def describe_failure(error, url):
    """把网络层的异常翻译成一句中文：原因和该做什么。"""
    host = urllib.parse.urlsplit(url).netloc
    reason = getattr(error, "reason", error)
    if isinstance(error, TimeoutError) or isinstance(reason, TimeoutError):
        return f"请求 {host} 超时（{error}），可以用 --timeout 调大时限"
    if isinstance(reason, ConnectionRefusedError):
        return f"连接 {host} 被拒绝：那里没有服务在监听（本机模型启动了吗？）"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"{host} 的 TLS 证书校验失败：请更新系统根证书，不要关闭证书校验"
    if isinstance(reason, ssl.SSLError):
        return f"和 {host} 的 TLS 连接失败（{reason.__class__.__name__}）"
    if isinstance(reason, OSError) and reason.__class__.__name__ == "gaierror":
        return f"无法解析域名 {host}：检查网络连接和 DNS"
    if isinstance(error, ValueError):
        return f"{host} 的{error}"
    return f"网络错误：{reason}"


def parse_response(status, headers, data, api_key, model, local=False):
    def failed(what):
        return KitError(f"错误：{what}。没有自动重试。", EXIT_MODEL_FAILED)

    if status != 200:
        what = (local and LOCAL_HTTP_ERRORS.get(status)) or HTTP_ERRORS.get(status, f"服务器返回 HTTP {status}")
        if status in (400, 404, 422):
            what += f"（当前模型：{model}）"
        retry_after = str(headers.get("Retry-After") or headers.get("retry-after") or "").strip()
        if status == 429 and retry_after:
            what += f"；服务器建议等 {retry_after} 秒" if retry_after.isdigit() else f"；服务器建议在 {retry_after} 之后再试"
        detail = server_message(data, api_key)
        raise failed(what + (f"。服务器说：{detail}" if detail else ""))
    if not data.strip():
        raise failed("服务器返回了空的响应体")
    try:
        payload = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise failed("服务器的响应不是 UTF-8 文本") from None
    except ValueError:
        raise failed("服务器的响应不是 JSON") from None
    if not isinstance(payload, dict) or not payload.get("choices"):
        detail = server_message(data, api_key)
        raise failed("服务器返回了错误对象，而不是回答" + (f"：{detail}" if detail else ""))
    choice = payload["choices"][0] if isinstance(payload["choices"], list) else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise failed("服务器的响应里没有 choices[0].message")
    content = message.get("content")
    return {"content": content if isinstance(content, str) else "", "finish_reason": choice.get("finish_reason"),
            "usage": payload.get("usage"), "model": model}


def server_message(data, api_key):
    """取出服务器错误对象里的 message，截短；万一其中出现密钥，先抹掉。"""
    try:
        error = json.loads(data.decode("utf-8")).get("error")
        text = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError, UnicodeDecodeError):
        return ""
    if not isinstance(text, str):
        return ""
    if api_key:
        text = text.replace(api_key, "***")
    return text[:200]


# ---------- 第三步：检查回答 ----------

def check_answer(reply, allowed_ids):
    """硬规则：截断、空白、非 JSON、状态不对、草稿为空、来源不合规，都拒绝。

    返回 (answer, problems)。problems 为空时 answer 是 {"status", "draft", "sources"}（重复的来源已合并）。
    """
    allowed = set(allowed_ids)
    if reply["finish_reason"] != "stop":
        return None, [f"回答没有正常结束（finish_reason 是 {reply['finish_reason']}，不是 stop），可能被截断"]
    content = reply["content"].strip()
    if not content:
        return None, ["回答是空的"]
    try:
        answer = json.loads(reply["content"], object_pairs_hook=json_object)   # 记下写了两遍的字段
    except json.JSONDecodeError as error:
        if content.startswith("```"):
            return None, ["回答不是单个 JSON 对象（外面包了 ``` 代码块）"]
        line, column, what, hint = explain_json_error(reply["content"], error)
        return None, [f"回答不是单个 JSON 对象（第 {line} 行第 {column} 列：{what}" + (f"。{hint}）" if hint else "）")]
    if not isinstance(answer, dict):
        return None, ["回答不是单个 JSON 对象"]
    status, draft, sources = answer.get("status"), answer.get("draft"), answer.get("sources")
    problems = [f"缺少字段 {field}" for field in ("status", "draft", "sources") if field not in answer]
    problems += [f"字段 {key} 写了 {len(values)} 次，不知道该信哪一个" for key, values in answer.duplicates.items()]
    if "status" in answer and status not in ANSWER_STATUSES:
        problems.append(f"status 是{describe(status)}，只允许 draft 或 missing")
    if "draft" in answer and (not isinstance(draft, str) or (status == "draft" and not draft.strip())):
        problems.append("draft 是空的" if isinstance(draft, str) else f"draft 应当是字符串，实际是{describe(draft)}")
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources) or (
            status == "draft" and not sources):
        if "sources" in answer:
            problems.append(f"sources 应当是非空的字符串数组，实际是{describe(sources)}")
        sources = []
    for source in dict.fromkeys(sources):
        if source not in allowed:
            problems.append(f"来源「{source}」不在这次发送的资料里（只允许 {'、'.join(sorted(allowed))}）")
    if problems:
        return None, problems
    return {"status": status, "draft": draft.strip(), "sources": list(dict.fromkeys(sources))}, []


# ---------- 第四步：把三步串起来 ----------

def call_model(question, materials, timeout=DEFAULT_TIMEOUT, trace=None):
    """决定目标 → 读密钥 → 请求。返回 (reply, 失败时的输出字段)；两者恰有一个不是 None。"""
    try:
        target = model_target()
        api_key = read_api_key() if target[2] else None
    except KitError as error:
        if error.exit_code == EXIT_USAGE:
            raise
        return None, failure(error, model_called=False)
    print(f"正在请求模型 {target[1]}（{urllib.parse.urlsplit(target[0]).netloc}），最多等 {timeout:g} 秒……",
          file=sys.stderr)
    try:
        return generate(question, api_key, materials, timeout=timeout, target=target, trace=trace), None
    except KitError as error:
        return None, failure(error, model_called=True)


def failure(error, model_called):
    print(error, file=sys.stderr)
    return {"status": "error", "model_called": model_called, "draft": None, "sources": [],
            "problems": [str(error).removeprefix("错误：")]}


def judge_reply(reply, allowed_ids):
    """用硬规则检查回答。返回 (输出字段, 退出码)：通过是 draft/missing 和 0，否则是 rejected 和 4。"""
    result = {"status": "rejected", "draft": None, "sources": [], "problems": []}
    answer, problems = check_answer(reply, allowed_ids)
    if problems:
        print(f"回答被拒绝：{'；'.join(problems)}", file=sys.stderr)
        print(f"原始回答（仅供排查，不要使用）：{reply['content'].strip()[:200] or '（空）'}", file=sys.stderr)
        result["problems"] = problems
        return result, EXIT_REJECTED
    if answer["status"] == "missing":
        print("回答格式合规：missing（发送的资料回答不了这个问题）", file=sys.stderr)
    else:
        print(f"回答格式合规：draft，引用 {'、'.join(answer['sources'])}", file=sys.stderr)
    result.update(answer)
    return result, EXIT_OK


def judge_saved_reply(path, allowed_ids):
    """--check-draft：把保存的回答文件当作模型返回的内容来检查。不请求模型，不读密钥；读不了的文件算被拒绝的回答。"""
    print(f"检查保存的回答 {path}（不调用模型，不读取密钥）", file=sys.stderr)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_RESPONSE_BYTES + 1)   # 和模型响应体一样，最多 1 MiB
        content = data.decode("utf-8-sig") if len(data) <= MAX_RESPONSE_BYTES else None
        problem = None if content is not None else f"回答文件 {path} 超过 1 MiB"
    except OSError as error:
        problem = f"读不了回答文件 {path}（{os_reason(error)}）"
    except UnicodeDecodeError:
        problem = f"回答文件 {path} 不是 UTF-8 编码"
    if problem:
        print(f"回答被拒绝：{problem}", file=sys.stderr)
        return {"status": "rejected", "draft": None, "sources": [], "problems": [problem]}, EXIT_REJECTED
    return judge_reply({"content": content, "finish_reason": "stop"}, allowed_ids)


def answer_with_model(question, materials, timeout=DEFAULT_TIMEOUT, trace=None):
    """请求并检查。返回输出对象里的 status、model_called、draft、sources、problems，以及退出码。"""
    reply, failed = call_model(question, materials, timeout, trace)
    if failed:
        return failed, EXIT_MODEL_FAILED
    result, code = judge_reply(reply, [m["id"] for m in materials])
    return {"status": result.pop("status"), "model_called": True, **result}, code


HELP = f"""\
用法：python model_reply_assistant.py [问题] [--timeout 秒]

基线做法：把三份资料全部发给模型，请它写一份回复草稿，并检查回答。结果以一个 JSON 对象写到 stdout。

  问题              省略时在 stderr 上提示“问题：”，再从标准输入读一行
  --timeout 秒      整个请求的总时限（默认 {DEFAULT_TIMEOUT:g} 秒）；超时不自动重试
  -h, --help        显示这段说明

环境变量：
  DEEPSEEK_API_KEY  DeepSeek 密钥；没有设置时用不回显的方式询问，终端无法隐藏输入就停下
  DEEPSEEK_MODEL    模型名，默认 {DEFAULT_MODEL}
  LOCAL_MODEL_URL   改用本机的 OpenAI 兼容模型，例如 http://127.0.0.1:11434/v1（只接受本机地址；不读密钥）
  LOCAL_MODEL_NAME  本机模型的名字，例如 qwen2.5:7b

官方地址固定为 {ENDPOINT}，不使用系统代理，证书校验始终开启。
退出码：0 正常；2 用法错误；3 模型调用失败；4 模型回答被拒绝；130 被 Ctrl-C 中断。
"""


def run(argv):
    options = parse_command_line(argv, USAGE, value_options={"--timeout": "timeout"})
    if options["help"]:
        sys.stdout.write(HELP)
        return EXIT_OK
    timeout = parse_timeout(options["timeout"])
    question = (options["question"] if options["question"] is not None else ask_question()).strip()
    if not question:
        raise KitError("错误：问题是空的。请输入一个问题，例如：试用几天？")
    result, code = answer_with_model(question, MATERIALS, timeout)
    write_json({"question": question, **result})
    return code


def main(argv=None):
    return run_cli(run, argv)


if __name__ == "__main__":
    sys.exit(main())
