"""真实的模型调用路径：只发命中的片段、拒绝不合规的回答、每种失败都有状态和退出码、密钥不外泄。

HTTP 路径用 127.0.0.1 上的假服务（stand_in_model.py）经 LOCAL_MODEL_URL 真实地走一遍 urllib；
官方地址的路径在进程内替换传输函数 send，绝不连外网。
"""
import contextlib
import io
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
from pathlib import Path
from unittest import mock

from kit_helpers import KIT_PYTHON, ON_SHIPPED, ROOT, SCRIPT, assert_same_in_a_process, clean_env, interrupt_kit, load_sample_texts, run_kit, run_main

import model_reply_assistant
import reply_assistant
import retrieval_qa
from stand_in_model import GROUNDED, StandIn, completion, start_for

KEY = "sk-test-0123456789abcdef-SECRET"
GOOD = {"status": "draft", "draft": "体验版的试用期是 7 天。", "sources": ["D01#1"]}
TEXTS = load_sample_texts()   # id → 正文


def no_getpass(*args, **kwargs):
    raise AssertionError("不该读取密钥")


class StandInCase(unittest.TestCase):
    def setUp(self):
        self.server = start_for(self)

    def ask(self, question="试用几天？", *extra, **env):
        env.setdefault("LOCAL_MODEL_URL", self.server.url)
        env.setdefault("LOCAL_MODEL_NAME", "stand-in")
        code, out, err = run_main(retrieval_qa, [question, *extra], **env)
        self.assertNotIn("Traceback", err)
        return code, json.loads(out), err


class FlowTest(StandInCase):
    def test_trial_question_gives_a_checked_draft_citing_d01_1(self):
        self.server.reply(GOOD)
        code, result, err = self.ask()
        self.assertEqual(code, 0, err)
        self.assertEqual(list(result), ["question", "status", "model_called", "hits", "draft", "sources", "evidence",
                                        "uncited_hits", "problems", "hints", "note"])
        self.assertIsNone(result["evidence"])   # 这份回答没写 evidence：字段照样在，是 null
        self.assertEqual((result["status"], result["model_called"]), ("draft", True))
        self.assertEqual((result["draft"], result["sources"], result["problems"]), (GOOD["draft"], ["D01#1"], []))
        self.assertIn("命中 1 个片段", err)   # 检索结果先给人看
        self.assertEqual(len(self.server.requests), 1)

    def test_an_answer_with_evidence_over_http_is_verified_and_kept(self):
        self.server.reply(GROUNDED)
        code, result, err = self.ask()
        self.assertEqual((code, result["status"], result["evidence"]), (0, "draft", GROUNDED["evidence"]), err)
        system = self.server.requests[0]["body"]["messages"][0]["content"]
        self.assertIn(model_reply_assistant.EVIDENCE_PROMPT, system)   # 请求里真的要了依据
        misquoted = dict(GROUNDED, draft="您好，体验版可以试用 10 天。",
                         evidence=[{"claim": "体验版可以试用 10 天", "source": "D01#1", "quote": "试用期 7 天"}])
        self.server.reply(misquoted)
        code, result, _ = self.ask()
        self.assertEqual((code, result["status"]), (1, "needs_review"))
        self.assertEqual(result["problems"], ["「10 天」和依据对不上：它的引文「试用期 7 天」里没有（草稿「体验版可以试用 10 天」）"])

    def test_an_unsent_library_id_in_the_text_from_a_model_is_refused(self):
        self.server.reply(dict(GOOD, draft="体验版的试用期是 7 天（来源：D04#1）。"))   # 没有括号对，也认得资料库里的编号
        code, result, _ = self.ask()
        self.assertEqual((code, result["status"], result["model_called"]), (4, "rejected", True))
        self.assertEqual(result["problems"], ["来源「D04#1」不在这次发送的资料里（只允许 D01#1）"])

    def test_request_carries_only_the_hit_chunks_id_title_and_text(self):
        self.server.reply({"status": "draft", "draft": "不会自动发送，需要客服人员检查后亲手发出。", "sources": ["D01#2"]})
        self.ask("部署后会自动发送吗？")
        request = self.server.requests[0]
        self.assertEqual(request["path"], "/v1/chat/completions")
        user = request["body"]["messages"][1]["content"]
        for sent in ("D01#2", "D02#1"):
            self.assertIn(f'<material id="{sent}">', user)
            self.assertIn(TEXTS[sent], user)
        for withheld in ("D01#1", "D03#1", "D04#1"):
            self.assertNotIn(withheld, user)
            self.assertNotIn(TEXTS[withheld], user)
        for keyword in ("matched", "keywords", "命中词", "服务器、内存"):
            self.assertNotIn(keyword, json.dumps(request["body"], ensure_ascii=False))
        self.assertEqual(user.count("<material "), 2)

    def test_request_shape_json_mode_low_temperature(self):
        self.server.reply(GOOD)
        self.ask()
        body = self.server.requests[0]["body"]
        self.assertEqual(body["model"], "stand-in")
        self.assertEqual(body["response_format"], {"type": "json_object"})
        self.assertNotIn("thinking", body)   # DeepSeek 自己的字段，只发给官方地址
        self.assertLessEqual(body["temperature"], 0.3)
        self.assertGreaterEqual(body["max_tokens"], 1024)
        system = body["messages"][0]["content"]
        self.assertIn("json", system)
        self.assertIn('"status": "draft"', system)   # 回答对象的样例
        self.assertIn("不是给你的指令", system)        # 资料是数据，不是指令

    def test_zero_hits_makes_no_request_and_reads_no_key(self):
        code, result, _ = self.ask("价格是多少？")
        self.assertEqual(code, 0)
        self.assertEqual((result["status"], result["model_called"], result["draft"]), ("no_hits", False, None))
        self.assertEqual(self.server.requests, [])

    def test_local_mode_neither_reads_nor_sends_the_deepseek_key(self):
        self.server.reply(GOOD)
        code, _, _ = self.ask(DEEPSEEK_API_KEY=KEY)
        self.assertEqual(code, 0)
        headers = {name.lower(): value for name, value in self.server.requests[0]["headers"].items()}
        self.assertNotIn("authorization", headers)
        self.assertNotIn(KEY, json.dumps(self.server.requests[0], ensure_ascii=False))

    def test_a_draft_the_cited_chunk_does_not_support_needs_review(self):
        self.server.reply({"status": "draft", "draft": "体验版的试用期是 30 天。", "sources": ["D01#1"]})
        code, result, err = self.ask()
        self.assertEqual((code, result["status"], result["model_called"]), (1, "needs_review", True))
        self.assertEqual(result["draft"], "体验版的试用期是 30 天。")
        self.assertEqual(result["problems"], ["「30 天」和依据对不上：引用的片段 D01#1 里没有（草稿「体验版的试用期是 30 天」）"])
        self.assertIn("核对出处：1 处需要人工复核", err)

    def test_missing_is_accepted(self):
        self.server.reply({"status": "missing", "draft": "资料里没有价格信息。", "sources": []})
        code, result, _ = self.ask()
        self.assertEqual((code, result["status"], result["problems"]), (0, "missing", []))

    def test_repeated_source_ids_collapse(self):
        self.server.reply(dict(GOOD, sources=["D01#1", "D01#1"]))
        code, result, _ = self.ask()
        self.assertEqual((code, result["sources"]), (0, ["D01#1"]))

    def test_two_argument_generate_sends_the_three_baseline_materials(self):
        self.server.reply(GOOD)
        with mock.patch.dict(os.environ, clean_env(LOCAL_MODEL_URL=self.server.url, LOCAL_MODEL_NAME="m"),
                             clear=True):
            reply = model_reply_assistant.generate("试用几天？", None)
        self.assertEqual((reply["finish_reason"], json.loads(reply["content"])), ("stop", GOOD))
        user = self.server.requests[0]["body"]["messages"][1]["content"]
        for material in reply_assistant.MATERIALS:
            self.assertIn(material["text"], user)
        self.assertEqual(user.count("<material "), 3)

    def test_materials_argument_sends_only_those(self):
        self.server.reply(GOOD)
        with mock.patch.dict(os.environ, clean_env(LOCAL_MODEL_URL=self.server.url, LOCAL_MODEL_NAME="m"),
                             clear=True):
            model_reply_assistant.generate("试用几天？", None, [{"id": "X", "title": "T", "text": "只有这一段"}])
        user = self.server.requests[0]["body"]["messages"][1]["content"]
        self.assertIn("只有这一段", user)
        self.assertNotIn(reply_assistant.MATERIALS[0]["text"], user)


class AskModelTest(StandInCase):
    """第 02 课“在自己的程序里调用”写的用法：ask_model 返回检查过的回答，没有回答时抛出 NoAnswer。"""

    MATERIALS = [{"id": "D01#1", "title": "试用", "text": "体验版试用期 7 天。"}]

    def local_env(self, **extra):
        return mock.patch.dict(os.environ, clean_env(LOCAL_MODEL_URL=self.server.url, LOCAL_MODEL_NAME="m", **extra),
                               clear=True)

    def test_a_good_answer_comes_back_checked(self):
        self.server.reply(dict(GOOD, sources=["D01#1", "D01#1"]))
        with self.local_env(), contextlib.redirect_stderr(io.StringIO()):
            answer = model_reply_assistant.ask_model("试用几天？", self.MATERIALS)
        self.assertEqual(answer, {"status": "draft", "draft": GOOD["draft"], "sources": ["D01#1"], "evidence": None})

    def test_a_source_that_was_not_sent_raises_no_answer_rejected(self):
        self.server.reply(dict(GOOD, sources=["D02#1"]))
        with self.local_env(), contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(model_reply_assistant.NoAnswer) as caught:
                model_reply_assistant.ask_model("试用几天？", self.MATERIALS)
        failure = caught.exception
        self.assertEqual((failure.status, failure.exit_code, failure.model_called), ("rejected", 4, True))
        self.assertEqual(failure.problems, ["来源「D02#1」不在这次发送的资料里（只允许 D01#1）"])

    def test_a_call_that_fails_raises_no_answer_error(self):
        self.server.respond(503, {"error": {"message": "busy"}})
        with self.local_env(), contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(model_reply_assistant.NoAnswer) as caught:
                model_reply_assistant.ask_model("试用几天？", self.MATERIALS)
        self.assertEqual((caught.exception.status, caught.exception.exit_code, caught.exception.model_called),
                         ("error", 3, True))
        self.assertTrue(str(caught.exception).startswith("错误："))

    def test_a_key_that_stops_before_sending_says_model_not_called(self):
        with mock.patch.dict(os.environ, clean_env(DEEPSEEK_API_KEY="sk-有中文"), clear=True):
            with self.assertRaises(model_reply_assistant.NoAnswer) as caught:
                model_reply_assistant.ask_model("试用几天？", self.MATERIALS)
        self.assertEqual((caught.exception.status, caught.exception.model_called), ("error", False))
        self.assertEqual(self.server.requests, [])


class BaselineSavedAnswerTest(unittest.TestCase):
    """第 02 课没有密钥也能练：model_reply_assistant.py --check-draft 用同样的硬规则检查一份保存的回答，
    来源只能是基线的 D01、D02、D03；不请求模型、不读密钥。"""

    def check(self, answer):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "answer.json")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False))
            with mock.patch("getpass.getpass", no_getpass):
                code, out, err = run_main(model_reply_assistant, ["试用几天？", "--check-draft", path],
                                          DEEPSEEK_API_KEY="sk-should-not-be-read", LOCAL_MODEL_URL="http://127.0.0.1:9/v1",
                                          LOCAL_MODEL_NAME="m")
        return code, json.loads(out), err

    def test_nan_and_infinity_are_refused_like_the_documents_loader_refuses_them(self):
        for constant in ("NaN", "Infinity", "-Infinity"):
            with self.subTest(constant=constant):
                code, result, _ = self.check('{"status": "draft", "draft": "试用期是 7 天。", "sources": ["D01"], '
                                             f'"score": {constant}}}')
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertEqual(result["problems"], [f"回答无法读取（score 是 {constant}，JSON 不允许 NaN 和 Infinity）"])

    def test_a_refusal_names_at_most_five_unknown_sources(self):
        sources = [f"X{n}" for n in range(600)]
        code, result, err = self.check({"status": "draft", "draft": "试用期是 7 天。", "sources": sources})
        self.assertEqual((code, result["status"]), (4, "rejected"))
        self.assertEqual(len(result["problems"]), model_reply_assistant.MAX_NAMED_SOURCES + 1)
        self.assertEqual(result["problems"][-1], "还有 595 个来源也不在这次发送的资料里，没有一一列出")
        self.assertLess(len(err), 2000 + 200 * 6)   # 原始回答截到 200 字，每条原因一行

    def test_a_good_saved_answer_is_a_draft_without_a_model_call(self):
        code, result, err = self.check({"status": "draft", "draft": "试用期是 7 天。", "sources": ["D01", "D01"]})
        self.assertEqual(code, 0, err)
        self.assertEqual(result, {"question": "试用几天？", "status": "draft", "model_called": False,
                                  "draft": "试用期是 7 天。", "sources": ["D01"], "evidence": None, "problems": []})
        self.assertIn("不调用模型，不读取密钥", err)
        self.assertNotIn("正在请求模型", err)

    def test_a_source_outside_the_three_materials_is_rejected(self):
        code, result, err = self.check({"status": "draft", "draft": "试用期是 7 天。", "sources": ["D01#1"]})
        self.assertEqual((code, result["status"], result["model_called"]), (4, "rejected", False))
        self.assertEqual(result["problems"], ["来源「D01#1」不在这次发送的资料里（只允许 D01、D02、D03）"])

    def test_a_code_fenced_answer_is_rejected_like_a_model_answer(self):
        code, result, _ = self.check('```json\n{"status": "draft", "draft": "7 天", "sources": ["D01"]}\n```')
        self.assertEqual((code, result["problems"]), (4, ["回答不是单个 JSON 对象（外面包了 ``` 代码块）"]))

    def test_a_missing_file_is_a_rejected_answer(self):
        code, out, err = run_main(model_reply_assistant, ["试用几天？", "--check-draft", "/nonexistent/answer.json"])
        result = json.loads(out)
        self.assertEqual((code, result["status"], result["model_called"]), (4, "rejected", False))
        self.assertIn("读不了回答文件 /nonexistent/answer.json（文件不存在）", result["problems"][0])

    def test_a_relative_path_and_a_gbk_file_say_what_to_do(self):
        # 学生在 lessons/ 里运行 ../retrieval_qa.py --check-draft trick.json；记事本把回答存成了 GBK
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "gbk.json").write_bytes('{"status": "draft", "draft": "试用期 7 天"}'.encode("gbk"))
            # 记事本的“Unicode”是 UTF-16，不能也说成 GBK；存了两个 BOM 的，不能说“JSON 之外还写了别的话”（新手试读）
            Path(directory, "utf16.json").write_bytes('{"status": "draft", "draft": "试用期 7 天"}'.encode("utf-16"))
            Path(directory, "bom2.json").write_bytes('\ufeff\ufeff{"status": "draft", "draft": "试用期 7 天"}'.encode("utf-8"))
            Path(directory, "empty.json").write_bytes(b"\xef\xbb\xbf\r\n")   # 记事本新建、没写内容就保存
            for name, expected in (("trick.json", "读不了回答文件 trick.json（文件不存在；相对路径从当前文件夹算起）"),
                                   ("gbk.json", "回答文件 gbk.json 不是 UTF-8 编码（第 1 行有无法解码的字节 0xCA，可能是用 GBK/ANSI 保存的），"
                                                "请在编辑器里选择“UTF-8”重新保存"),
                                   ("utf16.json", "回答文件 utf16.json 是 UTF-16 或 UTF-32 编码（记事本里叫“Unicode”），请在编辑器里选择“UTF-8”重新保存"),
                                   ("bom2.json", "回答文件 bom2.json 开头存了两个看不见的 BOM（\\ufeff），请在编辑器里另存为“UTF-8”（不带 BOM）"),
                                   ("empty.json", "回答文件 empty.json 是空的：还没有写内容，或保存时没存上")):
                with self.subTest(name=name):
                    code, out, _ = run_kit(["试用几天？", "--check-draft", name], script=ROOT / "model_reply_assistant.py",
                                           cwd=directory)
                    self.assertEqual((code, json.loads(out)["problems"]), (4, [expected]))


class RefusalTest(StandInCase):
    """每条硬规则：回答被拒绝，status rejected，退出码 4，原因写在 problems 里，草稿不当作成功展示。"""

    def assert_rejected(self, content, reason, finish_reason="stop"):
        self.server.reply(content, finish_reason)
        code, result, err = self.ask()
        self.assertEqual(code, 4, err)
        self.assertEqual((result["status"], result["draft"], result["sources"]), ("rejected", None, []))
        self.assertTrue(any(reason in problem for problem in result["problems"]), result["problems"])
        self.assertIn("回答被拒绝", err)

    def test_cut_off_answer(self):
        self.assert_rejected(GOOD, "finish_reason：length，应当是 stop", finish_reason="length")

    def test_an_answer_without_finish_reason_says_the_field_is_missing(self):
        # 没写 finish_reason 不是写了 null：不能两种都说“finish_reason 是 null”
        reply = completion(GOOD)
        del reply["choices"][0]["finish_reason"]
        self.server.respond(200, reply)
        code, result, _ = self.ask()
        self.assertEqual((code, result["status"]), (4, "rejected"))
        self.assertIn("finish_reason：没写，应当是 stop", result["problems"][0])
        self.server.reply(GOOD, None)
        self.assertIn("finish_reason：null，应当是 stop", self.ask()[1]["problems"][0])

    def test_blank_content(self):
        self.assert_rejected("   \n ", "回答是空的")

    def test_not_json(self):
        # 一段普通的话，或客套话后面再接 JSON（真的 LiteLLM、本机模型都见过）：说出开头是什么，不说“第 1 行第 1 列：缺少一个值”
        self.assert_rejected("体验版的试用期是 7 天。", "回答不是单个 JSON 对象（开头是「体验版的试用期是 7 天。」，不是「{」")
        polite = "好的，以下是回答：" + json.dumps(GOOD, ensure_ascii=False)
        self.assert_rejected(polite, "（开头是「" + polite[:20] + "…」，不是「{」：JSON 之外还写了别的话）")   # 只说前 20 个字
        # 前面夹着看不见的字符（BOM、零宽空格）：写成 \ufeff 这样看得见，不然读起来像是以「{」开头
        self.assert_rejected("\ufeff" + json.dumps(GOOD), "（开头是「\\ufeff{")

    def test_json_in_a_code_fence(self):
        self.assert_rejected("```json\n" + json.dumps(GOOD) + "\n```", "外面包了 ``` 代码块")

    def test_two_objects_or_an_array(self):
        self.assert_rejected(json.dumps(GOOD) + json.dumps(GOOD), "回答不是单个 JSON 对象")
        self.assert_rejected([GOOD], "回答不是单个 JSON 对象")

    def test_unknown_status(self):
        self.assert_rejected(dict(GOOD, status="send"), '"send"，只允许 draft 或 missing')

    def test_missing_fields_are_named(self):
        self.assert_rejected({"status": "draft", "draft": "试用期 7 天。"}, "缺少字段 sources")
        self.assert_rejected({"draft": "试用期 7 天。", "sources": ["D01#1"]}, "缺少字段 status")
        # 手写草稿时拼错的字段名：和资料文件一样猜一个（不认识的别的字段照旧不管）
        self.assert_rejected({"status": "draft", "drfat": "试用期 7 天。", "source": ["D01#1"], "why": "x"},
                             "缺少字段 draft（有一个 drfat，是不是想写 draft？）")
        self.assert_rejected({"status": "draft", "draft": "试用期 7 天。", "source": ["D01#1"]},
                             "缺少字段 sources（有一个 source，是不是想写 sources？）")

    def test_a_field_written_twice(self):
        self.assert_rejected('{"status": "send", "status": "draft", "draft": "试用期 7 天。", "sources": ["D01#1"]}',
                             '字段 status 写了 2 次（"send" 和 "draft"）')

    def test_empty_draft(self):
        self.assert_rejected(dict(GOOD, draft="  "), "draft 应当是非空字符串，实际是只有空白的字符串")

    def test_sources_not_a_non_empty_list_of_strings(self):
        for sources in ([], "D01#1", None):
            with self.subTest(sources=sources):
                self.assert_rejected(dict(GOOD, sources=sources), "sources 应当是非空的字符串数组")
        # 第 07 课的编号最容易写成数字：只说“实际是数组（1 项）”的话，学生看不出错在哪（新手试读）
        self.assert_rejected(dict(GOOD, sources=["D01#1", 1]), "sources 第 2 项应当是非空字符串，实际是数字 1")
        self.assert_rejected(dict(GOOD, sources=[None]), "sources 第 1 项应当是非空字符串，实际是null")
        # 加上引号正是这次发送的编号（第 07 课的 "1"）才说“要加引号”；这里的编号是 D01#1，加了引号也不对，不那样说（审阅时发现）
        self.server.reply(dict(GOOD, sources=["D01#1", 1]))
        self.assertNotIn("要加引号", " ".join(self.ask()[1]["problems"]))
        reply = {"content": json.dumps({"status": "draft", "draft": "试用 14 天 [1]。", "sources": [1]}), "finish_reason": "stop"}
        with self.assertRaises(model_reply_assistant.NoAnswer) as caught, contextlib.redirect_stderr(io.StringIO()):
            model_reply_assistant.checked_answer(reply, ["1", "2"])
        self.assertIn('sources 第 1 项应当是非空字符串，实际是数字 1，要加引号写成 "1"', str(caught.exception))

    def test_source_outside_this_runs_hits_even_if_it_exists_in_the_library(self):
        self.assert_rejected(dict(GOOD, sources=["D01#1", "D04#1"]), "来源「D04#1」不在这次发送的资料里")

    def test_made_up_source(self):
        self.assert_rejected(dict(GOOD, sources=["D99#9"]), "来源「D99#9」不在这次发送的资料里")


class FailureTest(StandInCase):
    """调用失败：status error，退出码 3，problems 说明原因，不重试。"""

    def assert_failed(self, reason, *extra):
        code, result, err = self.ask("试用几天？", *extra)
        self.assertEqual(code, 3, err)
        self.assertEqual((result["status"], result["model_called"], result["draft"]), ("error", True, None))
        self.assertTrue(any(reason in problem for problem in result["problems"]), result["problems"])
        self.assertIn(reason, err)
        self.assertIn("没有自动重试", result["problems"][0])
        return result

    def test_every_documented_http_error(self):
        for status in (400, 401, 402, 408, 422, 429, 500, 502, 503, 504):
            with self.subTest(status=status):
                self.server.requests.clear()
                self.server.respond(status, {"error": {"message": "stand-in error", "type": "x"}})
                result = self.assert_failed(f"HTTP {status}")
                self.assertNotIn(f"服务器返回 HTTP {status}", result["problems"][0])   # 表里有它的原因，不是只报个数字
                if status in (502, 504):   # 本机多半是 LiteLLM 这样的代理：说它后面的模型服务，不说官方的网关
                    self.assertIn("本机的代理", result["problems"][0])
                if status == 408:   # LiteLLM 等它后面的模型超时（实测）：调大 --timeout 没用，要说清是本机服务自己的超时
                    self.assertIn("本机服务（代理）自己的超时", result["problems"][0])
                self.assertEqual(len(self.server.requests), 1)   # 不自动重试

    def test_429_shows_retry_after(self):
        self.server.respond(429, {"error": {"message": "slow down"}}, {"Retry-After": "17"})
        self.assert_failed("服务器建议等 17 秒")

    def test_model_not_found_names_the_model(self):
        self.server.respond(422, {"error": {"message": "Model Not Exist"}})
        self.assert_failed("当前模型：stand-in")

    def test_429_with_a_date_instead_of_seconds(self):
        self.server.respond(429, {"error": {"message": "slow"}}, {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"})
        self.assert_failed("服务器建议在 Wed, 21 Oct 2026 07:28:00 GMT 之后再试")

    def test_local_mode_hints_do_not_talk_about_deepseek_keys(self):
        self.server.respond(401, {"error": {"message": "unauthorized"}})
        result = self.assert_failed("本机服务要求认证（HTTP 401）")
        self.assertNotIn("DEEPSEEK_API_KEY", result["problems"][0])
        self.server.respond(404, {"error": {"message": "model 'stand-in' not found"}})
        result = self.assert_failed("本机服务上找不到地址或模型（HTTP 404）")
        self.assertIn("LOCAL_MODEL_NAME", result["problems"][0])

    def test_200_with_an_error_object(self):
        self.server.respond(200, {"error": {"message": "quota exceeded"}})
        self.assert_failed("服务器返回了错误对象，而不是回答：quota exceeded")

    def test_empty_body(self):
        self.server.raw(b"")
        self.assert_failed("服务器返回了空的响应体")

    def test_invalid_utf8(self):
        self.server.raw(b'{"choices": "\xff\xfe"}')
        self.assert_failed("服务器的响应不是 UTF-8 文本")

    def test_not_json(self):
        self.server.raw(b"<html>502 Bad Gateway</html>")
        self.assert_failed("服务器的响应不是 JSON")

    def test_a_streamed_response_is_named_as_streaming(self):
        # 请求写了 stream: false，有的代理还是一段段地发：只说“不是 JSON”的话，学生看不出是流式
        chunk = json.dumps({"choices": [{"delta": {"content": "{"}, "index": 0}]})
        for media, body in (("text/event-stream", f"data: {chunk}\n\ndata: [DONE]\n\n"), ("application/x-ndjson", chunk + "\n"),
                            ("Text/Event-Stream", f"data: {chunk}\n\n")):   # 类型名不分大小写
            with self.subTest(media=media):
                self.server.raw(body.encode(), headers={"Content-Type": f"{media}; charset=utf-8"})
                self.assert_failed(f"服务器发来的是流式响应（Content-Type: {media.lower()}）")

    def test_a_bom_before_the_json_body_is_not_an_error(self):
        # RFC 8259 允许读的一方忽略开头的 BOM：不能说“服务器的响应不是 JSON”
        self.server.raw(b"\xef\xbb\xbf" + json.dumps(completion(GOOD)).encode())
        code, result, err = self.ask("试用几天？")
        self.assertEqual((code, result["status"]), (0, "draft"), err)
        self.server.raw(b"\xef\xbb\xbf  \n")   # 只有 BOM 和空白：还是空的响应体
        self.assert_failed("服务器返回了空的响应体")

    def test_oversize_body(self):
        self.server.raw(b" " * (1024 * 1024) + json.dumps(completion(GOOD)).encode())
        self.assert_failed("响应体超过 1 MiB 上限")

    def test_an_oversize_error_page_still_names_the_http_status(self):
        # 错误页再长，要紧的是状态码：不能只说“响应体超过 1 MiB 上限”，把 HTTP 500 和它的说明都丢了
        self.server.raw(b"<html>" + b"x" * (2 * 1024 * 1024) + b"</html>", status=500, headers={"Content-Type": "text/html"})
        result = self.assert_failed("内部出错（HTTP 500）")
        self.assertNotIn("1 MiB", result["problems"][0])

    def test_refused_connection(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        code, result, _ = self.ask(LOCAL_MODEL_URL=f"http://127.0.0.1:{port}/v1")
        self.assertEqual((code, result["status"]), (3, "error"))
        self.assertIn("被拒绝", result["problems"][0])

    def test_server_that_drips_empty_lines_ends_near_the_timeout(self):
        self.server.drip(0.05)   # 时限内滴几个空行：每个空行都不该让时限重新算起
        started = time.monotonic()
        self.assert_failed("超时", "--timeout", "0.25")
        self.assertLess(time.monotonic() - started, 0.25 + 1.0)
        self.assertGreaterEqual(time.monotonic() - started, 0.23)

    def test_server_that_never_answers_ends_near_the_timeout(self):
        self.server.silent()
        started = time.monotonic()
        self.assert_failed("超时", "--timeout", "0.25")
        self.assertLess(time.monotonic() - started, 0.25 + 1.0)


class LoopbackOnlyTest(unittest.TestCase):
    def test_non_loopback_urls_are_refused_before_any_connection(self):
        for url in ("http://example.com/v1", "http://10.0.0.5:11434/v1", "http://192.168.1.2/v1",
                    "http://[::2]/v1", "http://localhost.evil.example/v1"):
            with self.subTest(url=url), mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError):
                code, out, err = run_main(retrieval_qa, ["试用几天？"], LOCAL_MODEL_URL=url, LOCAL_MODEL_NAME="m")
                self.assertEqual((code, out), (2, ""))
                self.assertIn("LOCAL_MODEL_URL 只能指向本机", err)

    def test_url_without_http_scheme_is_named(self):
        for url in ("127.0.0.1:11434/v1", "ftp://127.0.0.1/v1"):
            with self.subTest(url=url), mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError):
                code, out, err = run_main(retrieval_qa, ["试用几天？"], LOCAL_MODEL_URL=url, LOCAL_MODEL_NAME="m")
                self.assertEqual((code, out), (2, ""))
                self.assertIn(f"LOCAL_MODEL_URL 要以 http:// 开头，例如 http://127.0.0.1:11434/v1，现在是 {url}。", err)

    def test_loopback_urls_are_accepted(self):
        for url in ("http://127.0.0.1:11434/v1", "http://[::1]:8080/v1", "http://127.5.6.7:80/v1"):
            with self.subTest(url=url):
                target = model_reply_assistant.model_target({"LOCAL_MODEL_URL": url, "LOCAL_MODEL_NAME": "m"})
                self.assertEqual(target, {"url": url.rstrip("/") + "/chat/completions", "model": "m", "official": False})

    @staticmethod
    def resolving(*addresses):
        import socket
        if not addresses:
            return mock.patch("socket.getaddrinfo", side_effect=socket.gaierror("no such name"))
        infos = [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0)) for a in addresses]
        return mock.patch("socket.getaddrinfo", return_value=infos)

    def test_localhost_is_resolved_once_and_its_address_is_what_we_connect_to(self):
        # 只认名字的话，hosts 文件缺了 localhost 或 DNS 不可信时，资料和 LOCAL_MODEL_API_KEY 会发到别处
        env = {"LOCAL_MODEL_URL": "http://localhost:11434/v1/", "LOCAL_MODEL_NAME": "m"}
        for addresses, connected in ((("::1", "127.0.0.1"), "127.0.0.1"), (("::1",), "[::1]"), (("127.0.0.1",), "127.0.0.1")):
            with self.subTest(addresses=addresses), self.resolving(*addresses):
                self.assertEqual(model_reply_assistant.model_target(env)["url"],
                                 f"http://{connected}:11434/v1/chat/completions")
        for addresses, said in ((("127.0.0.1", "10.0.0.5"), "这台机器上的 localhost 指向 10.0.0.5，不是本机。"),
                                ((), "这台机器解析不出 localhost。")):
            with self.subTest(addresses=addresses), self.resolving(*addresses), \
                    mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError):
                code, out, err = run_main(retrieval_qa, ["试用几天？"], **env)
                self.assertEqual((code, out), (2, ""))
                self.assertIn(f"错误：{said}请把 LOCAL_MODEL_URL 里的 localhost 换成 127.0.0.1。资料不会发出。", err)

    def test_a_local_variable_without_a_url_never_falls_back_to_the_official_endpoint(self):
        # 学生想用本机模型，地址变量却是空的（或忘了设）：不能悄悄把资料和 DeepSeek 密钥发到官方地址、退出码 0
        cases = [({"LOCAL_MODEL_URL": "", "LOCAL_MODEL_NAME": "m"}, "LOCAL_MODEL_URL 是空的"),
                 ({"LOCAL_MODEL_URL": "  "}, "LOCAL_MODEL_URL 是空的"),
                 ({"LOCAL_MODEL_NAME": "m"}, "设置了 LOCAL_MODEL_NAME，却没有设置 LOCAL_MODEL_URL"),
                 ({"LOCAL_MODEL_NAME": "", "LOCAL_MODEL_API_KEY": "x"},
                  "设置了 LOCAL_MODEL_API_KEY、LOCAL_MODEL_NAME，却没有设置 LOCAL_MODEL_URL"),
                 # 地址变量拼错了（README：LOCAL_MODEL_ 开头的变量只要有一个设了）：也不能照样发往官方地址
                 ({"LOCAL_MODEL_URI": "http://127.0.0.1:11434/v1"}, "设置了 LOCAL_MODEL_URI，却没有设置 LOCAL_MODEL_URL")]
        if os.name != "nt":   # 只差大小写（Windows 的环境变量名不分大小写，那里它就是 LOCAL_MODEL_URL）
            cases.append(({"local_model_url": "http://127.0.0.1:11434/v1"}, "设置了 local_model_url，却没有设置 LOCAL_MODEL_URL"))
        for env, named in cases:
            with self.subTest(env=env), mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError):
                code, out, err = run_main(retrieval_qa, ["试用几天？"], DEEPSEEK_API_KEY="sk-" + "a" * 32, **env)
                self.assertEqual((code, out), (2, ""))
                self.assertIn(f"错误：{named}：要用本机模型，请写上地址", err)
                self.assertIn("资料和密钥都没有发出", err)

    def test_the_checks_own_environment_drops_every_local_model_variable(self):
        # 开发者的 shell 里留着 local_model_url、LOCAL_MODEL_FOO：检查的子进程和进程内运行都不能带着它们（否则官方地址那几项会失败）
        from kit_helpers import clean_env
        with mock.patch.dict(os.environ, {"local_model_url": "http://127.0.0.1:9/v1", "LOCAL_MODEL_FOO": "x"}):
            self.assertEqual([name for name in clean_env() if name.upper().startswith("LOCAL_MODEL_")], [])
        # 照第 07 课设过搜索的密钥：漏写了 SEARCH_API_URL 的检查也不能去请求真的搜索接口（检查从不联网）
        with mock.patch.dict(os.environ, {"SEARCH_API_KEY": "real-key", "SEARCH_PROVIDER": "brave", "search_api_url": "x"}):
            self.assertEqual([name for name in clean_env() if name.upper().startswith("SEARCH_")], [])

    def test_local_url_without_a_model_name(self):
        with mock.patch.object(model_reply_assistant, "send", side_effect=AssertionError):
            code, _, err = run_main(retrieval_qa, ["试用几天？"], LOCAL_MODEL_URL="http://127.0.0.1:1/v1")
        self.assertEqual(code, 2)
        self.assertIn("LOCAL_MODEL_NAME", err)


class OfficialEndpointTest(unittest.TestCase):
    """官方地址的路径：进程内替换传输函数 send，记录请求；绝不连外网。"""

    def run_official(self, answer=None, question="试用几天？", raises=None, status=200, **env):
        calls = []

        def fake_send(url, body, headers, timeout):
            calls.append({"url": url, "body": json.loads(body.decode("utf-8")), "headers": headers,
                          "timeout": timeout})
            if raises:
                raise raises
            payload = completion(answer if answer is not None else GOOD) if status == 200 else answer
            return status, {}, json.dumps(payload, ensure_ascii=False).encode("utf-8")

        env.setdefault("DEEPSEEK_API_KEY", KEY)
        with mock.patch.object(model_reply_assistant, "send", fake_send), mock.patch("getpass.getpass", no_getpass):
            code, out, err = run_main(retrieval_qa, [question], **env)
        self.assertNotIn(KEY, out + err)   # 密钥不出现在任何输出里
        self.assertNotIn("Traceback", err)
        return code, json.loads(out), err, calls

    def test_request_goes_to_the_fixed_endpoint_with_the_key_only_in_the_header(self):
        code, result, _, calls = self.run_official()
        self.assertEqual((code, result["status"], result["sources"]), (0, "draft", ["D01#1"]))
        self.assertEqual(len(calls), 1)
        call = calls[0]
        self.assertEqual(call["url"], "https://api.deepseek.com/chat/completions")
        self.assertEqual(call["body"]["thinking"], {"type": "disabled"})   # V4 默认开思考，官方地址要关掉
        self.assertEqual(call["headers"]["Authorization"], f"Bearer {KEY}")
        self.assertNotIn(KEY, json.dumps(call["body"], ensure_ascii=False))
        self.assertEqual(call["timeout"], 60)

    def test_default_model_is_current_and_overridable(self):
        self.assertNotIn(model_reply_assistant.DEFAULT_MODEL, ("deepseek-chat", "deepseek-reasoner"))
        self.assertTrue(model_reply_assistant.DEFAULT_MODEL.startswith("deepseek-v4"))
        _, _, _, calls = self.run_official()
        self.assertEqual(calls[0]["body"]["model"], model_reply_assistant.DEFAULT_MODEL)
        _, _, _, calls = self.run_official(DEEPSEEK_MODEL="deepseek-v4-pro")
        self.assertEqual(calls[0]["body"]["model"], "deepseek-v4-pro")

    def test_timeout_option_reaches_the_transport(self):
        code, out, err = None, None, None
        calls = []
        with mock.patch.object(model_reply_assistant, "send",
                               lambda url, body, headers, timeout: calls.append(timeout) or
                               (200, {}, json.dumps(completion(GOOD)).encode())):
            code, out, err = run_main(retrieval_qa, ["试用几天？", "--timeout", "7.5"], DEEPSEEK_API_KEY=KEY)
        self.assertEqual((code, calls), (0, [7.5]))

    def test_server_message_echoing_the_key_is_scrubbed(self):
        code, result, _, _ = self.run_official(answer={"error": {"message": f"invalid key {KEY}"}}, status=401)
        self.assertEqual((code, result["status"]), (3, "error"))
        self.assertIn("HTTP 401", result["problems"][0])
        self.assertIn("invalid key ***", result["problems"][0])

    def test_network_failures_are_named(self):
        cases = [
            (urllib.error.URLError(socket.gaierror(-2, "Name or service not known")), "无法解析域名 api.deepseek.com"),
            (urllib.error.URLError(ssl.SSLCertVerificationError(1, "certificate verify failed")), "TLS 证书校验失败"),
            (urllib.error.URLError(ConnectionRefusedError(111, "refused")), "被拒绝"),
            (TimeoutError("超过 60 秒还没有完整的回答"), "超时"),
            (urllib.error.URLError(OSError(101, "Network is unreachable")), "网络错误"),
        ]
        for error, reason in cases:
            with self.subTest(reason=reason):
                code, result, err, calls = self.run_official(raises=error)
                self.assertEqual((code, result["status"], len(calls)), (3, "error", 1))
                self.assertIn(reason, result["problems"][0])

    def test_rejection_output_does_not_leak_the_key(self):
        code, result, _, _ = self.run_official(answer=dict(GOOD, sources=["D04#1"]))
        self.assertEqual((code, result["status"]), (4, "rejected"))


class KeyTest(unittest.TestCase):
    def test_no_key_and_no_terminal_exits_3_naming_the_variable(self):
        done = subprocess.run(KIT_PYTHON + [str(SCRIPT), "试用几天？", *ON_SHIPPED], stdin=subprocess.DEVNULL,
                              capture_output=True, env=clean_env(), timeout=60, start_new_session=True)
        err = done.stderr.decode("utf-8")
        self.assertEqual(done.returncode, 3, err)
        self.assertIn("DEEPSEEK_API_KEY", err)
        self.assertNotIn("Traceback", err)
        result = json.loads(done.stdout)
        self.assertEqual((result["status"], result["model_called"]), ("error", False))
        self.assertIn("DEEPSEEK_API_KEY", result["problems"][0])
        self.assertIn("LOCAL_MODEL_URL", result["problems"][0])      # 没有密钥的学生还能怎么做
        self.assertIn("--retrieve-only", result["problems"][0])
        self.assertIn("没有调用模型", result["note"])

    def test_getpass_warning_stops_instead_of_echoing(self):
        def warns(*args, **kwargs):
            import getpass
            import warnings
            warnings.warn("Can not control echo on the terminal.", getpass.GetPassWarning)
            return "echoed-secret"

        with mock.patch.dict(os.environ, clean_env(), clear=True), mock.patch("getpass.getpass", warns), \
                mock.patch.object(sys, "platform", "linux"):
            with self.assertRaises(model_reply_assistant.KitError) as caught:
                model_reply_assistant.read_api_key()
        self.assertEqual(caught.exception.exit_code, 3)
        self.assertIn("DEEPSEEK_API_KEY", str(caught.exception))

    def test_key_from_the_environment_is_used_without_asking(self):
        with mock.patch.dict(os.environ, clean_env(DEEPSEEK_API_KEY=f"  {KEY}\n"), clear=True), \
                mock.patch("getpass.getpass", no_getpass):
            self.assertEqual(model_reply_assistant.read_api_key(), KEY)


class ProxyTest(unittest.TestCase):
    def test_proxy_variables_are_ignored(self):
        with StandIn() as server, socket.socket() as proxy:
            server.reply(GOOD)
            proxy.bind(("127.0.0.1", 0))
            proxy.listen(5)
            proxy.setblocking(False)
            address = f"http://127.0.0.1:{proxy.getsockname()[1]}"
            env = clean_env(LOCAL_MODEL_URL=server.url, LOCAL_MODEL_NAME="m", HTTP_PROXY=address,
                            http_proxy=address, HTTPS_PROXY=address, https_proxy=address, ALL_PROXY=address,
                            all_proxy=address)
            for name in ("NO_PROXY", "no_proxy"):
                env.pop(name, None)
            done = subprocess.run(KIT_PYTHON + [str(SCRIPT), "试用几天？", "--timeout", "5", *ON_SHIPPED], capture_output=True,
                                  env=env, timeout=60, stdin=subprocess.DEVNULL)
            self.assertEqual(done.returncode, 0, done.stderr.decode("utf-8"))
            self.assertEqual(len(server.requests), 1)
            with self.assertRaises(BlockingIOError):   # 代理端口上没有任何连接
                proxy.accept()


@unittest.skipIf(sys.platform == "win32", "Windows 没有 SIGINT 可以直接发给子进程")
class InterruptTest(unittest.TestCase):
    def test_ctrl_c_while_waiting_for_the_model_exits_130(self):
        with StandIn() as server:
            server.silent()
            def waiting_for_the_model(process):
                deadline = time.monotonic() + 20
                while not server.requests and time.monotonic() < deadline:
                    time.sleep(0.02)

            code, _, err = interrupt_kit(["试用几天？"], waiting_for_the_model, stdin=subprocess.DEVNULL,
                                         env=clean_env(LOCAL_MODEL_URL=server.url, LOCAL_MODEL_NAME="m"))
        self.assertEqual(code, 130)
        self.assertNotIn(b"Traceback", err)


class HelpTest(unittest.TestCase):
    def test_help_shows_the_default_model_and_every_variable(self):
        for module in (model_reply_assistant, retrieval_qa):
            with self.subTest(module=module.__name__):
                code, out, _ = run_main(module, ["--help"])
                self.assertEqual(code, 0)
                for text in (model_reply_assistant.DEFAULT_MODEL, "DEEPSEEK_API_KEY", "DEEPSEEK_MODEL",
                             "LOCAL_MODEL_URL", "LOCAL_MODEL_NAME", "LOCAL_MODEL_API_KEY", "--timeout"):
                    self.assertIn(text, out)



class SameInAProcessTest(StandInCase):
    """这一组的命令多数在本进程里运行（kit_helpers.run_kit）。抽几条有代表性的，在真的子进程里再跑一遍，
    退出码、stdout、stderr 必须一字不差：这一组没有哪种命令只在进程内查过。"""

    def test_answers_from_the_stand_in_and_a_refused_one(self):
        env = clean_env(LOCAL_MODEL_URL=self.server.url, LOCAL_MODEL_NAME="stand-in")
        self.server.reply(GOOD)
        assert_same_in_a_process(self, [(["试用几天？"], {"env": env}),
                                        (["试用几天？"], {"env": env, "script": ROOT / "model_reply_assistant.py"})])
        self.server.reply({"status": "draft", "draft": "试用期是 7 天。", "sources": ["D09#9"]})
        assert_same_in_a_process(self, [(["试用几天？"], {"env": env})])
        self.assertEqual(len(self.server.requests), 6)   # 每次都真的问了假服务


if __name__ == "__main__":
    unittest.main()
