"""测试器材：127.0.0.1 上的一个假“模型服务”，按 chat-completions 的格式回话。

它不是模型，只会按检查的吩咐返回写死的内容、错误码、空行或者干脆不回答；不要拿给学生当模型用。
用法（在检查里）：
    with StandIn() as server:
        server.reply({"status": "draft", "draft": "…", "sources": ["D01#1"]})
        ……把 LOCAL_MODEL_URL 设成 server.url，运行程序……
        server.requests   # 收到的每个请求：path、headers、body（已解析的 JSON）
"""
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


# 一份带依据（evidence）的好回答，和第 02 课提示词要的样子一样：“试用几天？”命中 D01#1 时用它
GROUNDED = {"status": "draft", "draft": "您好，体验版可以试用 7 天。", "sources": ["D01#1"],
            "evidence": [{"claim": "体验版可以试用 7 天", "source": "D01#1", "quote": "试用期 7 天"}]}
GIVE_UP_AFTER = 5.0   # 滴空行和装死最多持续这么久，即使检查忘了关它，也会自己停下


def completion(content, finish_reason="stop"):
    """一份完整的 chat-completions 成功响应，字段和 DeepSeek 文档里的一样（包括它特有的缓存计数），
    这样检查走的是真实服务器会发来的形状。content 是 dict 时先转成 JSON 文本。"""
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    return {"id": "stand-in-0001", "object": "chat.completion", "created": 1764460800, "model": "stand-in",
            "system_fingerprint": "fp_stand_in",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                      "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 10}}


def start_for(test):
    """在一项检查里启动假服务，检查结束时关掉；这项检查里 getpass 一被调用就算失败（本机模式不该读密钥）。"""
    from unittest import mock

    def no_getpass(*args, **kwargs):
        raise AssertionError("不该读取密钥")

    server = StandIn().__enter__()
    test.addCleanup(server.__exit__, None, None, None)
    patcher = mock.patch("getpass.getpass", no_getpass)
    patcher.start()
    test.addCleanup(patcher.stop)
    return server


class QuietHandler(BaseHTTPRequestHandler):
    """两个假服务处理请求的共同底子：HTTP/1.1（连接可以保持），不打印访问日志（检查的输出里不要混进它）。"""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass


class LoopbackServer:
    """127.0.0.1 上的一个小 HTTP 服务，在后台线程里跑，with 块结束就关掉。假模型服务和第 07 课的假搜索接口都用它：
    子类给出网址的路径 PATH 和处理请求的 handler()；port 0 让系统挑一个空闲的端口（检查里都这样）。"""
    PATH = "/"

    def __init__(self, port=0):
        self.port = port
        self.requests = []
        self.stop = threading.Event()   # 关的时候叫醒还在“装死”“滴空行”的请求

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.PATH}"

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        return self

    def serve(self):
        """一个连接一个连接地接：没有连接时就一直等着，不空转。"""
        while not self.stop.is_set():
            self.server.handle_request()

    def __exit__(self, *exc):
        self.stop.set()
        # 接连接的循环正等着下一个连接：自己连一下把它叫醒，它看到 stop 就结束（不用等一个轮询周期，几十项检查各省 20 ms）
        socket.create_connection(self.server.server_address, timeout=5).close()
        self.thread.join()
        self.server.server_close()


class StandIn(LoopbackServer):
    PATH = "/v1"

    def __init__(self):
        super().__init__()
        self.behaviour = ("json", 200, completion({"status": "missing", "draft": "", "sources": []}), {})

    # ---- 吩咐它怎么回答 ----
    def reply(self, content, finish_reason="stop"):
        self.behaviour = ("json", 200, completion(content, finish_reason), {})

    def respond(self, status, payload, headers=None):
        self.behaviour = ("json", status, payload, headers or {})

    def raw(self, body, status=200, headers=None):
        """原样发送这些字节；headers 可以改掉默认的 Content-Type，或加上 Content-Encoding 之类。"""
        self.behaviour = ("raw", status, body, headers or {})

    def cut(self, body, missing=50):
        """Content-Length 说的比实际发送的多 missing 个字节，发完 body 就断开连接（传到一半断了的样子）。"""
        self.behaviour = ("cut", 200, body, {"Content-Length": str(len(body) + missing)})

    def drip(self, interval=0.05):
        """先发 200 的响应头，然后每隔 interval 秒发一个空行，永不结束（DeepSeek 慢时的样子）。"""
        self.behaviour = ("drip", interval, None, {})

    def silent(self):
        """收下请求，一个字节也不回。"""
        self.behaviour = ("silent", None, None, {})

    def handler(self):
        return make_handler(self)


def make_handler(stand_in):
    class Handler(QuietHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                body = raw
            stand_in.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            kind, status, payload, headers = stand_in.behaviour
            if kind == "silent":
                stand_in.stop.wait(GIVE_UP_AFTER)
                return
            if kind == "drip":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                give_up = time.monotonic() + GIVE_UP_AFTER
                while not stand_in.stop.wait(status) and time.monotonic() < give_up:
                    try:
                        self.wfile.write(b"\n")
                        self.wfile.flush()
                    except OSError:
                        return
                return
            data = payload if kind in ("raw", "cut") else json.dumps(payload, ensure_ascii=False).encode("utf-8")
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if kind == "cut":
                self.close_connection = True
            try:
                self.wfile.write(data)
            except OSError:
                pass

    return Handler
