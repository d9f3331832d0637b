"""模型服务器那一侧的一切：重定向、密钥、任意字节、地址的写法、真实服务的习惯。

这里的检查用自己的资料 checks/fixture_documents.json，学生怎么改 retrieval_documents.json 都不会跳过它们。
HTTP 路径用 127.0.0.1 上的假服务（stand_in_model.py）；官方地址的路径要么在进程内替换传输函数 send，
要么把 ENDPOINT 换成检查自己启动的 127.0.0.1 服务。绝不连外网。
"""
import gzip
import json
import os
import re
import socket
import sys
import tempfile
import threading
import unittest
import urllib.error
from pathlib import Path
from unittest import mock

from kit_helpers import FIXTURE_DOCUMENTS, assert_same_in_a_process, clean_env, run_kit, run_main, write_temp

import model_reply_assistant
import retrieval_qa
from model_reply_assistant import KitError
from stand_in_model import StandIn, completion, start_for

KEY = "sk-test-0123456789abcdef-SECRET"
LOCAL_KEY = "sk-local-9876543210-LOCALSECRET"
QUESTION = "借期是多久？"   # 在自己的资料里只命中 F01#1
GOOD = {"status": "draft", "draft": "普通图书的借期是 30 天。", "sources": ["F01#1"]}


def no_getpass(*args, **kwargs):
    raise AssertionError("不该读取密钥")


class Listener:
    """一个只监听、从不 accept 的端口：检查结束时看它有没有收到过连接。"""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        return self

    def was_contacted(self):
        try:
            connection, _ = self.sock.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True

    def __exit__(self, *exc):
        self.sock.close()


class RawServer:
    """127.0.0.1 上一个不好好讲 HTTP 的服务：收到请求后原样发送 reply 字节（可以是空的），然后断开；
    hold=True 时发完不断开，等对方先关。"""

    def __init__(self, reply, hold=False):
        self.reply, self.hold = reply, hold

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        return self

    def serve(self):
        try:
            connection, _ = self.sock.accept()
        except OSError:
            return
        with connection:
            connection.settimeout(5)
            try:
                self.read_request(connection)   # 先把请求读完：没读完就关，对方收到的是 RST，不是我们想演示的情况
                connection.sendall(self.reply)
                if not self.hold:
                    connection.shutdown(socket.SHUT_WR)
                while connection.recv(65536):
                    pass
            except OSError:
                pass

    @staticmethod
    def read_request(connection):
        data = b""
        while b"\r\n\r\n" not in data:
            data += connection.recv(65536) or b"\r\n\r\n"
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += connection.recv(65536) or b" " * length

    def __exit__(self, *exc):
        self.sock.close()
        self.thread.join(5)


class ServerCase(unittest.TestCase):
    """每个检查一个假服务；程序在进程内运行，用自己的资料，getpass 一被调用就算失败。"""

    def setUp(self):
        self.server = start_for(self)

    def ask(self, *extra, question=QUESTION, **env):
        """本机模式请求假服务。返回 (退出码, 输出对象, stderr)；密钥绝不出现在输出里，也没有 traceback。"""
        env.setdefault("LOCAL_MODEL_URL", self.server.url)
        env.setdefault("LOCAL_MODEL_NAME", "stand-in")
        return self.run_kit_in_process([question, "--documents", str(FIXTURE_DOCUMENTS), *extra], **env)

    def ask_official(self, *extra, **env):
        """官方地址的路径，但 ENDPOINT 换成这个假服务：密钥头、thinking 字段都和真的一样。"""
        env.setdefault("DEEPSEEK_API_KEY", KEY)
        with mock.patch.object(model_reply_assistant, "ENDPOINT", self.server.url + "/chat/completions"):
            return self.run_kit_in_process([QUESTION, "--documents", str(FIXTURE_DOCUMENTS), *extra], **env)

    def run_kit_in_process(self, args, **env):
        code, out, err = run_main(retrieval_qa, args, **env)
        for secret in (KEY, LOCAL_KEY):
            self.assertNotIn(secret, out + err)
        self.assertNotIn("Traceback", err)
        return code, json.loads(out), err

    def assert_failed(self, result, code, *reasons):
        """调用失败：退出码 3、status error、原因在 problems 里而且只有一行。"""
        self.assertEqual((code, result["status"], result["draft"]), (3, "error", None), result)
        for reason in reasons:
            self.assertIn(reason, result["problems"][0])
        self.assertNotIn("\n", result["problems"][0])


# ---------- 1. 重定向一律不跟随 ----------

class RedirectTest(ServerCase):
    def test_every_redirect_status_is_refused_and_the_target_sees_no_connection(self):
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status=status), Listener() as second:
                self.server.requests.clear()
                self.server.respond(status, {}, {"Location": f"http://127.0.0.1:{second.port}/v1/chat/completions"})
                code, result, err = self.ask()
                self.assert_failed(result, code, f"HTTP {status}", f"127.0.0.1:{second.port}", "不跟随重定向")
                self.assertEqual(len(self.server.requests), 1)
                self.assertFalse(second.was_contacted(), "重定向的目标收到了连接")

    def test_official_endpoint_redirect_does_not_carry_the_key_anywhere(self):
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status=status), Listener() as second:
                self.server.requests.clear()
                self.server.respond(status, {}, {"Location": f"http://127.0.0.1:{second.port}/steal"})
                code, result, _ = self.ask_official()
                self.assert_failed(result, code, f"HTTP {status}", f"127.0.0.1:{second.port}", "官方地址不会这样回答")
                self.assertFalse(second.was_contacted())
                self.assertEqual(self.server.requests[0]["headers"]["Authorization"], f"Bearer {KEY}")

    def test_redirect_to_another_host_names_only_the_host(self):
        self.server.respond(302, {}, {"Location": f"http://user:{KEY}@evil.example:8080/x?token={KEY}"})
        code, result, _ = self.ask_official()
        self.assert_failed(result, code, "要求转到 evil.example:8080（HTTP 302 重定向）")
        self.assertNotIn("user", result["problems"][0])

    def test_redirect_without_a_location(self):
        for headers in ({}, {"Location": ""}):
            with self.subTest(headers=headers):
                self.server.respond(307, {}, headers)
                code, result, _ = self.ask()
                self.assert_failed(result, code, "服务器要求重定向，但没有给出新地址（HTTP 307 重定向）", "LOCAL_MODEL_URL")


# ---------- 2. 密钥不出现在任何输出里 ----------

class KeyShapeTest(unittest.TestCase):
    """密钥先检查样子再用：有换行、空格、控制字符、非 ASCII、引号都停下（退出码 3），报错说哪里不对，不显示密钥。"""

    CASES = {
        f"{KEY[:10]}\n{KEY[10:]}": "中间有换行",
        f"{KEY[:10]} {KEY[10:]}": "中间有空格",
        f"{KEY[:10]}\x07{KEY[10:]}": "里有看不见的控制字符",
        f"{KEY[:10]}\u200b{KEY[10:]}": "里有看不见的控制字符",
        f"ｓｋ{KEY[2:]}": "里有中文、全角字母或其他非 ASCII 字符",
        f'"{KEY}"': "带着引号",
    }

    def run_with(self, **env):
        with mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError("不该发出请求")), \
                mock.patch("getpass.getpass", no_getpass):
            code, out, err = run_main(retrieval_qa, [QUESTION, "--documents", str(FIXTURE_DOCUMENTS)], **env)
        self.assertNotIn("Traceback", err)
        return code, out, err

    def test_deepseek_key_with_a_bad_character_stops_before_sending(self):
        for key, problem in self.CASES.items():
            with self.subTest(problem=problem):
                code, out, err = self.run_with(DEEPSEEK_API_KEY=key)
                result = json.loads(out)
                self.assertEqual((code, result["status"], result["model_called"]), (3, "error", False))
                self.assertIn(f"环境变量 DEEPSEEK_API_KEY 的值{problem}", result["problems"][0])
                for piece in (KEY[:10], KEY[10:], KEY[2:]):
                    self.assertNotIn(piece, out + err)

    def test_local_key_with_a_bad_character_names_its_own_variable(self):
        code, out, err = self.run_with(LOCAL_MODEL_URL="http://127.0.0.1:9/v1", LOCAL_MODEL_NAME="m",
                                       LOCAL_MODEL_API_KEY=f"{LOCAL_KEY[:8]}\r\n{LOCAL_KEY[8:]}")
        result = json.loads(out)
        self.assertEqual((code, result["status"], result["model_called"]), (3, "error", False))
        self.assertIn("环境变量 LOCAL_MODEL_API_KEY 的值中间有换行", result["problems"][0])
        self.assertNotIn(LOCAL_KEY[8:], out + err)

    def test_an_empty_key_variable_is_called_empty_not_unset(self):
        for env, said in (({"DEEPSEEK_API_KEY": "  "}, "环境变量 DEEPSEEK_API_KEY 是空的"), ({}, "环境变量 DEEPSEEK_API_KEY 没有设置")):
            with self.subTest(said=said), mock.patch.dict(os.environ, clean_env(**env), clear=True), \
                    mock.patch("getpass.getpass", side_effect=EOFError), mock.patch.object(sys, "platform", "linux"):
                with self.assertRaises(KitError) as caught:
                    model_reply_assistant.read_api_key()
                self.assertTrue(str(caught.exception).startswith(f"错误：{said}，而当前终端无法隐藏输入"))

    def test_surrounding_whitespace_is_not_a_problem(self):
        with mock.patch.dict(os.environ, clean_env(DEEPSEEK_API_KEY=f"\t {KEY} \r\n"), clear=True):
            self.assertEqual(model_reply_assistant.read_api_key(), KEY)

    def test_a_typed_key_is_checked_the_same_way(self):
        with mock.patch.dict(os.environ, clean_env(), clear=True), \
                mock.patch("getpass.getpass", lambda *a, **k: f"{KEY[:10]} {KEY[10:]}"), \
                mock.patch.object(sys, "platform", "linux"):
            with self.assertRaises(KitError) as caught:
                model_reply_assistant.read_api_key()
        self.assertEqual(caught.exception.exit_code, 3)
        self.assertIn("中间有空格", str(caught.exception))
        self.assertNotIn(KEY[10:], str(caught.exception))


class KeyScrubTest(ServerCase):
    """服务器和异常带来的文字（错误信息、纯文本响应体、Retry-After、异常说明、finish_reason、回答本身）里的密钥都被抹掉。"""

    def test_key_echoed_in_every_place_a_server_can_put_it(self):
        discarded = "服务器的回答里出现了你的密钥，这份回答已丢弃"
        echoes = [
            (lambda key: self.server.respond(401, {"error": {"message": f"bad key {key}"}}), "***"),
            (lambda key: self.server.respond(500, {"detail": f"boom {key}"}), "***"),
            (lambda key: self.server.raw(f"Internal Server Error for {key}".encode(), status=500,
                                         headers={"Content-Type": "text/plain"}), "***"),
            (lambda key: self.server.respond(429, {"error": {"message": "slow"}}, {"Retry-After": f"later {key}"}), "***"),
            (lambda key: self.server.respond(200, {"error": {"message": f"quota of {key}"}}), "***"),
            (lambda key: self.server.respond(400, {"error": {"message": f"bad {key[:9]}\n{key[9:]} here"}}), "***"),
            (lambda key: self.server.reply(GOOD, finish_reason=f"stopped-by-{key}"), "***"),
            (lambda key: self.server.reply(f"not json {key}"), discarded),
            (lambda key: self.server.reply(dict(GOOD, draft=f"借期 30 天，你的密钥是 {key}")), discarded),
            # 密钥写成 \u 转义：回答的原文里看不出来，解析成 JSON 之后才是密钥
            (lambda key: self.server.reply('{"status": "draft", "draft": "借期 30 天。", "sources": ["'
                                           + "".join(f"\\u{ord(c):04x}" for c in key) + '"]}'), discarded),
        ]
        for index, (echo, marker) in enumerate(echoes):
            with self.subTest(case=index):
                echo(KEY)
                code, result, err = self.ask_official("--trace")
                self.assertIn(code, (1, 3, 4))
                self.assertIn(marker, json.dumps(result, ensure_ascii=False) + err)
                self.assertNotIn(KEY[:12].casefold(), (json.dumps(result, ensure_ascii=False) + err).casefold())
                echo(LOCAL_KEY)
                code, result, err = self.ask("--trace", LOCAL_MODEL_API_KEY=LOCAL_KEY)
                self.assertIn(marker, json.dumps(result, ensure_ascii=False) + err)
                self.assertNotIn(LOCAL_KEY[:12].casefold(), (json.dumps(result, ensure_ascii=False) + err).casefold())

    def test_a_key_the_server_wrote_in_other_case_is_still_hidden(self):
        # 不是 sk- 开头的密钥（LiteLLM 代理的 master key 常这样起名）只靠 scrub 抹掉：服务器把它改成大写回显，也不能原样打印出来
        key = "litellm-master-9f8e7d6c5b4a3210"
        for shown in (key.upper(), key.title()):
            with self.subTest(shown=shown):
                self.server.respond(401, {"error": {"message": f"bad key {shown}"}})
                code, result, err = self.ask("--trace", LOCAL_MODEL_API_KEY=key)
                printed = json.dumps(result, ensure_ascii=False) + err
                self.assertEqual(code, 3, err)
                self.assertIn("bad key ***", printed)
                self.assertNotIn("9f8e7d6c5b4a", printed.casefold())

    def test_an_answer_is_discarded_only_for_the_key_as_sent(self):
        # 密钥（ollama-local）和回答里的词只差大小写：抹掉消息里的可以宽一点，整份回答丢掉要认原样的密钥
        self.assertFalse(model_reply_assistant.mentions_secret('{"draft": "可以用 Ollama-Local 在本机运行。"}', "ollama-local"))
        self.assertTrue(model_reply_assistant.mentions_secret('{"draft": "密钥是 ollama-local。"}', "ollama-local"))
        self.assertEqual(model_reply_assistant.scrub("bad key OLLAMA-LOCAL", "ollama-local"), "bad key ***")
        self.assertEqual(model_reply_assistant.scrub("本机用 Ollama", "ollama"), "本机用 Ollama")   # 短于 8 个字符的是占位符，不是秘密

    def test_a_placeholder_local_key_is_too_short_to_scrub(self):
        self.server.reply(GOOD)   # 本机服务常让人随便填个 a；抹掉它会把回答里的每个 a 都弄坏
        code, result, _ = self.ask(LOCAL_MODEL_API_KEY="a")
        self.assertEqual((code, result["status"], result["draft"]), (0, "draft", GOOD["draft"]))
        self.assertEqual(self.server.requests[0]["headers"]["Authorization"], "Bearer a")

    def test_no_half_key_where_a_long_message_is_cut(self):
        for filler in (226, 236, 246, 256):   # 截断的位置落在密钥的开头、中间和结尾附近
            with self.subTest(filler=filler):
                self.server.respond(500, {"error": {"message": "x" * filler + KEY + " and more text " * 20}},
                                    {"Retry-After": "y" * 40 + KEY})
                code, result, err = self.ask_official()
                self.assertNotIn(KEY[:12], json.dumps(result, ensure_ascii=False) + err)
                self.assertNotIn(KEY[-12:], json.dumps(result, ensure_ascii=False) + err)

    def test_key_inside_an_exception_text_is_scrubbed(self):
        def failing_send(url, body, headers, timeout):
            raise urllib.error.URLError(OSError(f"proxy said no to {headers['Authorization']}"))

        with mock.patch.object(model_reply_assistant, "send", failing_send):
            code, result, _ = self.run_kit_in_process([QUESTION, "--documents", str(FIXTURE_DOCUMENTS)],
                                                      DEEPSEEK_API_KEY=KEY)
        self.assert_failed(result, code, "网络错误", "Bearer ***")

    def test_local_key_goes_only_to_the_loopback_server_and_the_deepseek_key_is_never_read(self):
        self.server.reply(GOOD)
        code, result, _ = self.ask(LOCAL_MODEL_API_KEY=f" {LOCAL_KEY}\n", DEEPSEEK_API_KEY=KEY)
        self.assertEqual((code, result["status"]), (0, "draft"))
        request = self.server.requests[0]
        self.assertEqual(request["headers"]["Authorization"], f"Bearer {LOCAL_KEY}")
        self.assertNotIn(KEY, json.dumps(request, ensure_ascii=False))

    def test_a_local_key_without_a_local_url_sends_nothing_anywhere(self):
        # 不改发官方地址（只带 DeepSeek 密钥），而是用法错误：学生多半是忘了设 LOCAL_MODEL_URL
        self.server.reply(GOOD)
        with mock.patch.object(model_reply_assistant, "ENDPOINT", self.server.url + "/chat/completions"):
            code, out, err = run_main(retrieval_qa, [QUESTION, "--documents", str(FIXTURE_DOCUMENTS)],
                                      DEEPSEEK_API_KEY=KEY, LOCAL_MODEL_API_KEY=LOCAL_KEY)
        self.assertEqual((code, out, self.server.requests), (2, "", []))
        self.assertIn("设置了 LOCAL_MODEL_API_KEY，却没有设置 LOCAL_MODEL_URL", err)
        self.assertNotIn(LOCAL_KEY, err)

    def test_without_a_local_key_no_authorization_header_is_sent(self):
        self.server.reply(GOOD)
        self.ask(DEEPSEEK_API_KEY=KEY)
        headers = {name.lower() for name in self.server.requests[0]["headers"]}
        self.assertNotIn("authorization", headers)


# ---------- 3. 任何字节、任何 JSON：一句清楚的话，不会是 traceback ----------

TERMINAL_TRICK = "\x1b]0;pwned\x07\x1b[2J\n回答格式合规：draft"   # 改终端标题、清屏，再伪造一行“合规”


class ControlCharacterTest(ServerCase):
    """别人给的文字里的控制字符（终端的 ESC 序列、换行）不会原样打到终端上，也不会让一条原因变成好几行。"""

    def assert_clean(self, result, err):
        shown = json.dumps(result, ensure_ascii=False) + err
        self.assertNotIn("\x1b", shown)
        self.assertNotIn("\x07", shown)
        self.assertNotIn("\n回答格式合规", err)
        for problem in result["problems"]:
            self.assertNotIn("\n", problem)

    def test_from_the_model(self):
        for answer, finish_reason in ((dict(GOOD, sources=[TERMINAL_TRICK]), "stop"), (GOOD, TERMINAL_TRICK),
                                      ('{"' + TERMINAL_TRICK.replace("\n", "\\n").replace("\x1b", "\\u001b").replace("\x07", "\\u0007")
                                       + '": 1, "' + TERMINAL_TRICK.replace("\n", "\\n").replace("\x1b", "\\u001b").replace("\x07", "\\u0007")
                                       + '": 2}', "stop")):
            with self.subTest(finish_reason=finish_reason[:4]):
                self.server.reply(answer, finish_reason=finish_reason)
                code, result, err = self.ask("--trace")
                self.assertEqual(code, 4)
                self.assert_clean(result, err)

    def test_a_huge_finish_reason_is_cut(self):
        self.server.reply(GOOD, finish_reason="x" * 500_000)
        code, result, _ = self.ask()
        self.assertEqual(code, 4)
        self.assertLess(len(result["problems"][0]), 200)

    def test_from_a_saved_answer(self):
        with tempfile.TemporaryDirectory() as directory:
            path = write_temp(directory, "answer.json", json.dumps(dict(GOOD, sources=[TERMINAL_TRICK])))
            code, result, err = self.run_kit_in_process([QUESTION, "--documents", str(FIXTURE_DOCUMENTS),
                                                         "--check-draft", str(path)])
        self.assertEqual(code, 4)
        self.assert_clean(result, err)

    def test_from_the_documents_file(self):
        for field in ("id", "title"):
            with self.subTest(field=field), tempfile.TemporaryDirectory() as directory:
                records = json.loads(FIXTURE_DOCUMENTS.read_text(encoding="utf-8-sig"))
                records[0][field] = TERMINAL_TRICK
                path = write_temp(directory, "docs.json", json.dumps(records, ensure_ascii=False))
                code, out, err = run_kit(["--retrieve-only", "借期是多久？", "--documents", str(path)])
                self.assertEqual((code, out), (2, ""))
                self.assertNotIn("\x1b", err)
                self.assertIn(f"的 {field} 里有控制字符（换行、ESC 之类）", err)
                self.assertEqual(len(err.strip().splitlines()), 1)

DEEP = "[" * 100_000
LONG_INTEGER = '{"status": "draft", "draft": "借期 30 天。", "sources": ["F01#1"], "n": ' + "7" * 5000 + "}"


class AnyJsonTest(ServerCase):
    def test_model_answer_nested_too_deep_or_with_a_huge_integer_is_rejected(self):
        for content, reason in ((DEEP, "括号嵌套太深"), (LONG_INTEGER, "里面有位数太多的整数")):
            with self.subTest(reason=reason):
                self.server.reply(content)
                code, result, err = self.ask()
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertIn(f"回答无法读取（{reason}", result["problems"][0])

    def test_response_body_nested_too_deep_or_with_a_huge_integer_is_a_failed_call(self):
        bodies = {"括号嵌套太深": DEEP.encode(),
                  "里面有位数太多的整数": json.dumps(completion(GOOD))[:-1].encode() + b', "n": ' + b"9" * 5000 + b"}"}
        for reason, body in bodies.items():
            with self.subTest(reason=reason):
                self.server.raw(body)
                code, result, _ = self.ask()
                self.assert_failed(result, code, f"服务器的响应无法读取：{reason}")

    def test_saved_answer_nested_too_deep_or_with_a_huge_integer_is_rejected(self):
        with tempfile.TemporaryDirectory() as directory:
            for content, reason in ((DEEP, "括号嵌套太深"), (LONG_INTEGER, "里面有位数太多的整数")):
                with self.subTest(reason=reason):
                    path = write_temp(directory, "answer.json", content)
                    code, result, _ = self.run_kit_in_process([QUESTION, "--documents", str(FIXTURE_DOCUMENTS),
                                                               "--check-draft", str(path)])
                    self.assertEqual((code, result["status"], result["model_called"]), (4, "rejected", False))
                    self.assertIn(reason, result["problems"][0])

    def test_documents_with_a_huge_integer_name_the_file(self):
        with tempfile.TemporaryDirectory() as directory:
            path = write_temp(directory, "docs.json", '[{"id": "A", "title": "t", "text": "x", "keywords": ["k"], '
                                                      '"n": ' + "1" * 5000 + "}]")
            code, out, err = run_kit(["--retrieve-only", "k", "--documents", str(path)])
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err.strip(), f"错误：资料文件 {path}：里面有位数太多的整数，无法读取。")


class BodyTest(ServerCase):
    def test_body_cut_off_before_its_content_length_is_incomplete_not_utf8(self):
        body = json.dumps(completion(GOOD), ensure_ascii=False).encode("utf-8")
        cut_at = body.index("借".encode("utf-8")) + 1   # 切在一个汉字的中间
        self.server.cut(body[:cut_at], missing=len(body) - cut_at)
        code, result, _ = self.ask()
        self.assert_failed(result, code, "响应不完整", f"只收到 {cut_at} 字节")
        self.assertNotIn("UTF-8", result["problems"][0])

    def test_gzip_body_is_named(self):
        self.server.raw(gzip.compress(json.dumps(completion(GOOD)).encode()), headers={"Content-Encoding": "gzip"})
        code, result, _ = self.ask()
        self.assert_failed(result, code, "Content-Encoding: gzip")
        self.assertEqual(self.server.requests[0]["headers"]["Accept-Encoding"], "identity")

    def test_a_charset_other_than_utf8_is_named(self):
        self.server.raw(json.dumps(completion(GOOD), ensure_ascii=False).encode("gbk"),
                        headers={"Content-Type": "application/json; charset=GBK"})
        code, result, _ = self.ask()
        self.assert_failed(result, code, "编码是 gbk")

    def test_utf8_charset_and_no_charset_are_fine(self):
        for content_type in ("application/json; charset=utf-8", 'application/json;charset="UTF-8"', "application/json"):
            with self.subTest(content_type=content_type):
                self.server.raw(json.dumps(completion(GOOD), ensure_ascii=False).encode("utf-8"),
                                headers={"Content-Type": content_type})
                code, result, _ = self.ask()
                self.assertEqual((code, result["status"]), (0, "draft"))

    def test_a_server_that_does_not_speak_http(self):
        chunked_and_cut = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n{\"ch"
        for reply, reason in ((b"hello, this is not http\r\n\r\n", "不是合规的 HTTP"), (b"", "没有回答就断开了连接"),
                              (chunked_and_cut, "响应不完整：传到一半连接断了")):
            with self.subTest(reason=reason), RawServer(reply) as raw:
                code, result, _ = self.ask(LOCAL_MODEL_URL=raw.url)
                self.assert_failed(result, code, reason)

    def test_a_negative_chunk_size_does_not_read_until_the_server_stops(self):
        # http.client 原本会把 -1 当成“读到连接关闭为止”，绕过 1 MiB 的上限；服务器不关连接，程序就一直读到超时
        reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n" + b"x" * 4096
        with RawServer(reply, hold=True) as raw:
            code, result, _ = self.ask("--timeout", "5", LOCAL_MODEL_URL=raw.url)
        self.assert_failed(result, code, "响应不完整", "分块的格式不对")

    def test_interim_1xx_responses_are_skipped(self):
        # 103 Early Hints 之后才是真正的 200：不能报成“HTTP 103”
        body = json.dumps(completion(GOOD), ensure_ascii=False).encode("utf-8")
        final = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
        for interim in (b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
                        b"HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n"):
            with self.subTest(interim=interim), RawServer(interim + final + body) as raw:
                code, result, err = self.ask(LOCAL_MODEL_URL=raw.url)
                self.assertEqual((code, result["status"]), (0, "draft"), err)

    def test_a_content_length_that_only_looks_like_a_number(self):
        reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ²\r\n\r\n{}".encode("latin-1")
        with RawServer(reply) as raw:
            code, result, _ = self.ask(LOCAL_MODEL_URL=raw.url)
        self.assert_failed(result, code, "服务器的响应里没有回答（choices 缺少或是空的）")

    def test_odd_but_valid_answers_get_their_own_reason(self):
        cases = [({}, "服务器的响应里没有回答（choices 缺少或是空的）"),
                 ({"choices": []}, "服务器的响应里没有回答（choices 缺少或是空的）"),
                 (dict(completion(GOOD), choices=[{"index": 0, "message": {"role": "assistant", "content": 5},
                                                   "finish_reason": "stop"}]), "content 应当是字符串，实际是数字 5")]
        for payload, reason in cases:
            with self.subTest(reason=reason):
                self.server.respond(200, payload)
                code, result, _ = self.ask()
                self.assert_failed(result, code, reason)

    def test_charset_spellings_of_utf8_are_accepted_and_an_empty_one_is_ignored(self):
        for content_type in ("application/json; charset=utf_8", "application/json; charset=UTF8",
                             "application/json; charset=", "application/json; charset=us-ascii"):
            with self.subTest(content_type=content_type):
                self.server.raw(json.dumps(completion(GOOD)).encode("ascii"), headers={"Content-Type": content_type})
                code, result, _ = self.ask()
                self.assertEqual((code, result["status"]), (0, "draft"))

    def test_https_uses_a_verifying_context_and_http_needs_none(self):
        import ssl
        made = []
        real = ssl.create_default_context

        def recording(*args, **kwargs):
            made.append(real(*args, **kwargs))
            return made[-1]

        with mock.patch("ssl.create_default_context", recording):
            self.server.reply(GOOD)
            self.assertEqual(self.ask()[0], 0)
            self.assertEqual(made, [])   # 本机的 http 地址用不着证书
            code, result, _ = self.ask(LOCAL_MODEL_URL=self.server.url.replace("http://", "https://"))
        self.assert_failed(result, code, "TLS 连接失败", "把 LOCAL_MODEL_URL 里的 https:// 改成 http://")   # 对面讲明文 HTTP
        self.assertEqual(len(made), 1)
        self.assertEqual((made[0].verify_mode, made[0].check_hostname), (ssl.CERT_REQUIRED, True))

    def test_a_refused_connection_asks_about_the_port_too(self):
        with Listener() as closed:
            port = closed.port
        code, result, _ = self.ask(LOCAL_MODEL_URL=f"http://127.0.0.1:{port}/v1")
        self.assert_failed(result, code, f"连接 127.0.0.1:{port} 被拒绝", "本机模型启动了吗？端口写对了吗？")

    def test_a_bug_in_the_kit_is_not_reported_as_a_network_error(self):
        with mock.patch.object(model_reply_assistant, "open_and_read", side_effect=KeyError("程序自己的 bug")):
            with self.assertRaises(KeyError):
                model_reply_assistant.generate(QUESTION, None, timeout=5,
                                               target={"url": self.server.url + "/chat/completions",
                                                       "model": "m", "official": False})


class FileKindTest(unittest.TestCase):
    """不是普通文件的路径在打开之前就被拒绝；上层文件夹读不了时说“权限”，不说“找不到”。"""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)

    def documents(self, path):
        code, out, err = run_kit(["--retrieve-only", "借期是多久？", "--documents", str(path)])
        self.assertEqual((code, out), (2, ""), err)
        self.assertNotIn("Traceback", err)
        return err.strip()

    def saved_answer(self, path):
        code, out, err = run_kit([QUESTION, "--documents", str(FIXTURE_DOCUMENTS), "--check-draft", str(path)])
        self.assertNotIn("Traceback", err)
        result = json.loads(out)
        self.assertEqual((code, result["status"]), (4, "rejected"))
        return result["problems"][0]

    @unittest.skipUnless(hasattr(os, "mkfifo"), "这个系统没有命名管道")
    def test_a_named_pipe_is_refused_without_waiting(self):
        fifo = self.dir / "pipe.json"
        os.mkfifo(fifo)
        self.assertEqual(self.documents(fifo), f"错误：资料文件 {fifo}：无法读取（不是普通文件，像是命名管道或设备）。")
        self.assertIn("不是普通文件", self.saved_answer(fifo))

    @unittest.skipUnless(os.path.exists("/dev/null"), "这个系统没有 /dev/null")
    def test_a_device_is_refused(self):
        self.assertIn("不是普通文件", self.documents("/dev/null"))
        self.assertIn("不是普通文件", self.saved_answer("/dev/null"))

    def test_a_directory_as_the_saved_answer(self):
        self.assertIn("这是一个文件夹", self.saved_answer(self.dir))

    def test_a_file_in_a_folder_the_user_cannot_enter_says_permission(self):
        target = str(self.dir / "locked" / "docs.json")
        real_stat = os.stat

        def stat(path, *args, **kwargs):   # 以 root 运行时 chmod 挡不住，所以在进程内模拟“上层文件夹不让进”
            if str(path) == target:
                raise PermissionError(13, "Permission denied", target)
            return real_stat(path, *args, **kwargs)

        with mock.patch("os.stat", stat):
            with self.assertRaises(KitError) as caught:
                retrieval_qa.read_document_bytes(target, target)
        self.assertEqual(str(caught.exception), f"错误：资料文件 {target}：无法读取（没有读取权限）。")


class EmptyOptionValueTest(unittest.TestCase):
    def test_every_option_with_an_empty_value_is_a_usage_error(self):
        for args in (["--documents", ""], ["--documents="], ["--check-draft", ""], ["--check-draft="],
                     ["--timeout", ""], ["--timeout="], ["--documents", "  "]):
            with self.subTest(args=args):
                code, out, err = run_kit(["借期是多久？", *args])
                self.assertEqual((code, out), (2, ""))
                name = args[0].split("=")[0]
                self.assertTrue(err.startswith(f"错误：{name} 的值是空的"), err)
                self.assertEqual(len(err.strip().splitlines()), 1)

    def test_the_model_script_refuses_an_empty_timeout_too(self):
        code, out, err = run_main(model_reply_assistant, ["试用几天？", "--timeout="])
        self.assertEqual((code, out), (2, ""))
        self.assertIn("--timeout 的值是空的", err)


# ---------- 4. 地址说什么就是什么 ----------

class LocalUrlTest(unittest.TestCase):
    def refused(self, url):
        with mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError("不该连接")), \
                mock.patch("getpass.getpass", no_getpass):
            code, out, err = run_main(retrieval_qa, [QUESTION, "--documents", str(FIXTURE_DOCUMENTS)],
                                      LOCAL_MODEL_URL=url, LOCAL_MODEL_NAME="m")
        self.assertEqual((code, out), (2, ""), err)
        self.assertNotIn("Traceback", err)
        last = err.strip().splitlines()[-1]   # 前面是检索结果；地址要到请求模型时才检查
        self.assertTrue(last.startswith("错误：LOCAL_MODEL_URL"), err)
        return last

    def test_ports_outside_1_to_65535_or_not_a_number(self):
        for port in ("99999", "0", "65536", "abc", "+80", "", "1234567"):
            with self.subTest(port=port):
                self.assertIn("端口应当是 1–65535 之间的整数", self.refused(f"http://127.0.0.1:{port}/v1"))

    def test_user_and_password_are_refused_and_not_echoed(self):
        for url in ("http://user@127.0.0.1:11434/v1", f"http://u:{KEY}@127.0.0.1/v1", "http://127.0.0.1@evil.example/v1"):
            with self.subTest(url=url):
                err = self.refused(url)
                self.assertIn("不能有用户名或密码", err)
                self.assertNotIn(KEY, err)

    def test_characters_the_parser_and_the_connection_could_read_differently(self):
        for url in ("http://127.0.0.1:11434\\@evil.example/v1", "http://127.0.0.1 :11434/v1",
                    "http://127.0.0.1:11434/v1\r\nHost: evil", "http://１２７.0.0.1:11434/v1", "http://127.0.0.1\t/v1"):
            with self.subTest(url=url):
                self.assertIn("空格、反斜杠、全角或看不见的字符", self.refused(url))
        self.assertIn("LOCAL_MODEL_URL 里有「１」：只写普通的半角网址", self.refused("http://１２７.0.0.1:11434/v1"))   # 点名是哪个字

    def test_query_and_fragment_are_refused(self):
        for url in ("http://127.0.0.1:11434/v1?key=1", "http://127.0.0.1:11434/v1#x"):
            with self.subTest(url=url):
                self.assertIn("不能有 ? 或 #", self.refused(url))

    def test_the_full_endpoint_pasted_as_the_base_url(self):
        for url, shorter in (("http://127.0.0.1:11434/v1/chat/completions", "http://127.0.0.1:11434/v1"),
                             ("http://localhost:4000/chat/completions/", "http://localhost:4000")):
            with self.subTest(url=url):
                self.assertEqual(self.refused(url), "错误：LOCAL_MODEL_URL 只写到 /v1 为止，程序会自己接上 "
                                                    f"/chat/completions，请写成 {shorter}。")

    def test_ipv4_mapped_loopback_is_refused_on_every_python(self):
        err = self.refused("http://[::ffff:127.0.0.1]:11434/v1")
        self.assertIn("只能指向本机", err)
        self.assertIn("请直接写 127.0.0.1", err)

    def test_other_loopback_lookalikes_are_refused(self):
        for url in ("http://127.1:11434/v1", "http://localhost.:11434/v1", "http://[::1%25lo]:11434/v1",
                    "http://0.0.0.0:11434/v1", "http://[::]:11434/v1", "http://[127.0.0.1]:11434/v1"):
            with self.subTest(url=url):
                self.refused(url)

    def test_the_url_is_rebuilt_from_what_was_checked(self):
        cases = {
            "http://127.0.0.1:11434/v1": "http://127.0.0.1:11434/v1/chat/completions",
            "http://localhost:11434/v1/": "http://127.0.0.1:11434/v1/chat/completions",   # http 连解析出的地址
            "http://LOCALHOST:1234": "http://127.0.0.1:1234/chat/completions",
            "http://[::1]:8080/v1": "http://[::1]:8080/v1/chat/completions",
            "http://127.5.6.7/v1": "http://127.5.6.7:80/v1/chat/completions",
            "https://localhost/v1": "https://localhost:443/v1/chat/completions",
        }
        import socket
        resolved = [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", 0)), (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 0))]
        for url, rebuilt in cases.items():
            with self.subTest(url=url), mock.patch("socket.getaddrinfo", return_value=resolved):
                target = model_reply_assistant.model_target({"LOCAL_MODEL_URL": url, "LOCAL_MODEL_NAME": "m"})
                self.assertEqual(target, {"url": rebuilt, "model": "m", "official": False})

    def test_the_request_reaches_exactly_the_checked_host_port_and_path(self):
        with StandIn() as server:
            server.reply(GOOD)
            port = server.server.server_address[1]
            code, out, err = run_main(retrieval_qa, [QUESTION, "--documents", str(FIXTURE_DOCUMENTS)],
                                      LOCAL_MODEL_URL=f"http://127.0.0.1:{port}/v1/", LOCAL_MODEL_NAME="m")
        self.assertEqual(code, 0, err)
        self.assertEqual([request["path"] for request in server.requests], ["/v1/chat/completions"])
        self.assertEqual(server.requests[0]["headers"]["Host"], f"127.0.0.1:{port}")


# ---------- 5. 真实的 OpenAI 兼容服务 ----------

class RealServerHabitsTest(ServerCase):

    def test_official_http_errors_say_why_not_just_the_number(self):
        # 官方地址的每个错误码都有原因和该做什么；502、504 是网关和代理常回的（不能只说“服务器返回 HTTP 502”）
        for status in (400, 401, 402, 408, 422, 429, 500, 502, 503, 504):
            with self.subTest(status=status):
                self.server.respond(status, {"error": {"message": "stand-in error"}})
                code, result, _ = self.ask_official()
                self.assert_failed(result, code, f"HTTP {status}", "stand-in error")
                self.assertNotIn(f"服务器返回 HTTP {status}", result["problems"][0])
                self.assertNotIn("本机", result["problems"][0])   # 官方地址的说法，不是本机服务的
    def test_thinking_goes_only_to_the_official_endpoint(self):
        self.server.reply(GOOD)
        self.ask()
        self.assertNotIn("thinking", self.server.requests[0]["body"])
        self.ask_official()
        self.assertEqual(self.server.requests[1]["body"]["thinking"], {"type": "disabled"})

    def test_a_multi_line_server_error_is_one_line_cut_between_words(self):
        message = ("litellm.UnsupportedParamsError: openai does not support parameters: ['thinking'], for model=m.\n"
                   "To drop these, set `litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n drop_params: true`\n"
                   + "Received Model Group=m Available Model Group Fallbacks=None " * 5)
        self.server.respond(400, {"error": {"message": message, "type": "None", "param": None, "code": "400"}})
        code, result, err = self.ask()
        self.assert_failed(result, code, "服务器说它不支持请求里的某个参数",
                           "openai does not support parameters: ['thinking'], for model=m. To drop these")
        reason = result["problems"][0]
        self.assertTrue(reason.endswith("…。没有自动重试。"), reason)
        self.assertLessEqual(len(reason[:-len("。没有自动重试。")]), model_reply_assistant.MAX_FAILURE_TEXT)
        shown = reason.split("服务器说：", 1)[1][:-len("…。没有自动重试。")]
        self.assertIn(shown + " ", " ".join(message.split()) + " ")   # 停在一个完整的词后面
        self.assertEqual([line for line in err.splitlines() if line.startswith("错误：")],
                         ["错误：" + result["problems"][0]])   # stderr 上也只有一行

    def test_litellm_without_its_database_explains_a_wrong_key(self):
        self.server.respond(400, {"error": {"message": "No connected db.", "type": "no_db_connection", "param": None,
                                            "code": "400"}})
        code, result, _ = self.ask(LOCAL_MODEL_API_KEY=LOCAL_KEY)
        self.assert_failed(result, code, "请求被本机服务拒绝（HTTP 400）：LiteLLM 代理这样回答，通常是 LOCAL_MODEL_API_KEY "
                                         "和它的 master key 不一致（当前模型：stand-in）。服务器说：No connected db。")

    def test_insufficient_system_resource_is_a_failed_call_not_a_rejected_answer(self):
        self.server.reply(GOOD, finish_reason="insufficient_system_resource")
        code, result, _ = self.ask_official()
        self.assert_failed(result, code, "insufficient_system_resource", "稍后手动重试")

    def test_insufficient_system_resource_rewritten_to_stop_by_a_litellm_proxy_is_still_a_failed_call(self):
        # LiteLLM 1.108.7 实测：它不认识的 finish_reason 改写成 stop，原话放进 provider_specific_fields.native_finish_reason
        def through_proxy(native):
            payload = completion(GOOD, "stop")
            payload["choices"][0]["provider_specific_fields"] = {"native_finish_reason": native}
            return payload
        self.server.respond(200, through_proxy("insufficient_system_resource"))
        code, result, _ = self.ask(LOCAL_MODEL_API_KEY=LOCAL_KEY)
        self.assert_failed(result, code, "insufficient_system_resource", "稍后手动重试")
        self.server.respond(200, through_proxy("end_turn"))   # 别的后端写完时的原话：代理说的 stop 照用，回答照常检查
        code, result, _ = self.ask(LOCAL_MODEL_API_KEY=LOCAL_KEY)
        self.assertEqual((code, result["status"]), (0, "draft"))

    def test_local_500_suggests_the_local_key_only_when_none_was_sent(self):
        for key in (None, LOCAL_KEY):
            with self.subTest(key=key):
                self.server.raw(b"Internal Server Error", status=500, headers={"Content-Type": "text/plain; charset=utf-8"})
                code, result, _ = self.ask(**({"LOCAL_MODEL_API_KEY": key} if key else {}))
                self.assert_failed(result, code, "HTTP 500", "服务器说：Internal Server Error", "看看运行本机服务的窗口里的报错")
                # 真的 LiteLLM 代理实测：没带密钥时是这个 500；带了密钥还是 500，就是服务自己出了错，不该再让学生去查密钥
                self.assertEqual("LOCAL_MODEL_API_KEY" in result["problems"][0], key is None, result["problems"][0])

    def test_what_the_server_said_comes_first(self):
        # llama-cpp-python 实测的几种回答：错误的说明要跟着服务器说的原因走
        self.server.raw(b"CUDA out of memory", status=500, headers={"Content-Type": "text/plain; charset=utf-8"})
        code, result, _ = self.ask()
        self.assertIn("本机服务内部出错（HTTP 500），服务器说：CUDA out of memory", result["problems"][0])
        self.assertLess(result["problems"][0].index("CUDA out of memory"), result["problems"][0].index("看看运行本机服务的窗口"))
        self.server.respond(400, {"error": {"message": "Requested tokens (3068) exceed context window of 512. "
                                                      "This model's maximum context length is 512 tokens, however you "
                                                      "requested 3068 tokens"}})
        code, result, _ = self.ask()
        self.assert_failed(result, code, "上下文窗口放不下这次的请求（服务器说的 token 数：512、3068）")
        self.assertNotIn("JSON 模式", result["problems"][0])
        self.server.respond(401, {"error": "Invalid API Key"})
        code, result, _ = self.ask(LOCAL_MODEL_API_KEY=LOCAL_KEY)
        self.assert_failed(result, code, "本机服务拒绝了 LOCAL_MODEL_API_KEY 里的密钥（HTTP 401）")

    def test_a_cut_off_answer_names_the_token_counts(self):
        self.server.reply(GOOD, finish_reason="length")
        code, result, _ = self.ask()
        self.assertEqual((code, result["status"]), (4, "rejected"))
        self.assertIn("finish_reason：length，应当是 stop", result["problems"][0])
        self.assertRegex(result["problems"][0], r"这次输入 \d+ \+ 输出 \d+ 个 token，本机模型的上下文窗口太小时也会这样")

    def test_local_401_points_to_the_local_key_variable(self):
        self.server.respond(401, {"error": "Unauthorized"})
        code, result, _ = self.ask()
        self.assert_failed(result, code, "HTTP 401", "LOCAL_MODEL_API_KEY", "服务器说：Unauthorized")
        self.assertNotIn("DEEPSEEK_API_KEY", result["problems"][0])

    def test_the_stand_in_sends_the_documented_response_shape(self):
        body = completion(GOOD)
        self.assertLessEqual({"id", "object", "created", "model", "choices", "usage"}, set(body))
        self.assertLessEqual({"index", "message", "finish_reason"}, set(body["choices"][0]))
        self.assertEqual(body["choices"][0]["message"]["role"], "assistant")
        self.assertLessEqual({"prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens",
                              "prompt_cache_miss_tokens"}, set(body["usage"]))

    def test_trace_shows_token_counts_of_the_full_shape(self):
        self.server.reply(GOOD)
        code, _, err = self.ask("--trace")
        self.assertEqual(code, 0)
        self.assertIn("finish_reason stop，token 10 输入 + 5 输出", err)


class SharedStateTest(unittest.TestCase):
    def test_every_error_message_goes_through_kit_error(self):
        # 报错只在 make_kit_error 里拼“错误：”；别处不直接构造 KitError，格式就不会走样
        calls = {}
        for name in ("reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py"):
            source = (FIXTURE_DOCUMENTS.parent.parent / name).read_text(encoding="utf-8")
            calls[name] = re.findall(r"(?<!class )(?<![\w.])KitError\(", source)   # 不算 class KitError(Exception) 那一行
        self.assertEqual({name: len(found) for name, found in calls.items()},
                         {"reply_assistant.py": 0, "model_reply_assistant.py": 1, "retrieval_qa.py": 0})

    def test_the_error_prefix_is_written_in_one_place(self):
        # 代码里（不算说明文字）以“错误：”开头的字符串只有两处：error_line，和文件开头的 Python 版本检查
        # （它必须在任何函数定义之前运行，用不了 error_line）
        import ast
        places = []
        for name in ("reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py"):
            tree = ast.parse((FIXTURE_DOCUMENTS.parent.parent / name).read_text(encoding="utf-8"))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                          and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
            places += [(name, node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                       and isinstance(node.value, str) and node.value.startswith("错误：") and id(node) not in docstrings]
        self.assertEqual([name for name, _ in places], ["model_reply_assistant.py", "model_reply_assistant.py"], places)

    def test_one_truncation_helper(self):
        # 截短只在 one_line 里做：别处不再自己切 [:30] 再补“…”
        for name in ("reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py"):
            with self.subTest(script=name):
                source = (FIXTURE_DOCUMENTS.parent.parent / name).read_text(encoding="utf-8")
                self.assertEqual(re.findall(r'\[:[\w\s+-]*\]\s*\+\s*"…"', source), [])
        self.assertEqual(retrieval_qa.one_line("第一行\n第二行\x1b[2J", 5), "第一行…")   # 换行变空格，截断处的空格不留

    def test_retrieval_help_carries_the_same_environment_section(self):
        code, out, _ = run_main(retrieval_qa, ["--help"])
        self.assertEqual(code, 0)
        self.assertTrue(out.endswith(model_reply_assistant.ENVIRONMENT_HELP), out[-300:])


# ---------- 6. 资料：只差大小写或全角半角的 id ----------

class LookAlikeIdTest(unittest.TestCase):
    def test_ids_that_differ_only_by_case_or_width_are_refused_naming_both(self):
        for twin in ("f01#1", "Ｆ01＃1", " F01#1 ", "F01#1\u200b", "F\u200d01#1"):   # 零宽字符夹在 id 里也算同一个
            with self.subTest(twin=twin), tempfile.TemporaryDirectory() as directory:
                records = json.loads(FIXTURE_DOCUMENTS.read_text(encoding="utf-8-sig"))
                records.append({"id": twin, "title": "另一条", "text": "别的内容。", "keywords": ["别的"]})
                path = write_temp(directory, "docs.json", json.dumps(records, ensure_ascii=False))
                code, out, err = run_kit(["--retrieve-only", "借期是多久？", "--documents", str(path)])
                self.assertEqual((code, out), (2, ""))
                shown = json.dumps(twin, ensure_ascii=False).replace("\u200b", "\\u200b").replace("\u200d", "\\u200d")   # 看不见的字符写出来
                self.assertEqual(err.strip(), f"错误：资料文件 {path}：第 4 条记录（id {shown}）"
                                              '的 id 和第 1 条的 id "F01#1" 只差大小写、全角半角、首尾空格或看不见的字符。'
                                              "提示：人和模型都容易把它们当成同一个片段，请改成明显不同的 id。")



class SameInAProcessTest(unittest.TestCase):
    """这一组的命令多数在本进程里运行（kit_helpers.run_kit）。抽几条有代表性的，在真的子进程里再跑一遍，
    退出码、stdout、stderr 必须一字不差：这一组没有哪种命令只在进程内查过。"""

    def test_other_documents_a_redirecting_server_and_a_bad_file(self):
        with StandIn() as server, tempfile.TemporaryDirectory() as directory:
            server.respond(302, {}, {"Location": "http://example.com/v1/chat/completions"})
            env = clean_env(LOCAL_MODEL_URL=server.url, LOCAL_MODEL_NAME="stand-in")
            bad = write_temp(directory, "bad.json", '[{"id": "L1", "title": "借期", "text": "借期 30 天。", "keywords": ["借期"],}]')
            assert_same_in_a_process(self, [(["--retrieve-only", "借期是多久？", "--documents", str(FIXTURE_DOCUMENTS)], {}),
                                            (["借期是多久？", "--documents", str(FIXTURE_DOCUMENTS)], {"env": env}),
                                            (["--retrieve-only", "借期是多久？", "--documents", str(bad)], {})])


if __name__ == "__main__":
    unittest.main()
