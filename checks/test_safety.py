"""从外面来的输入按类处理：一个严格的 JSON 读法、一种文字折叠、有上限的工作量、不外泄的密钥、只属于自己的缓存、
搜索失败一律是一个 JSON。每组检查对着一种机制：把那个机制拿掉，这一组就会失败。期望值按规则写。"""
import json
import os
import re
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from kit_helpers import SHIPPED_DOCUMENTS, assert_same_in_a_process, clean_env, run_json, run_kit, write_temp

import model_reply_assistant as kit
import retrieval_qa
import stand_in_search
from model_reply_assistant import JsonProblem, NoAnswer, parse_json
from stand_in_model import StandIn
from stand_in_search import StandInSearch

SHIPPED = json.loads(SHIPPED_DOCUMENTS.read_text(encoding="utf-8"))


def check_draft(answer, question="保存多久？"):
    """把 answer（字典，或原样的文字）存成文件，用 --check-draft 检查；返回 (退出码, 输出的 JSON)。"""
    with tempfile.TemporaryDirectory() as directory:
        text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        code, result, _ = run_json(["--check-draft", str(write_temp(directory, "answer.json", text)), question])
    return code, result


class StrictReaderTest(unittest.TestCase):
    """parse_json：字段写两遍、NaN、太深、太长，哪一层都拒绝，并说出在哪里。"""

    def test_a_key_written_twice_is_refused_at_any_depth_naming_the_key_and_where(self):
        cases = {'{"a": 1, "a": 2}': "字段 a 写了 2 次（1 和 2）",
                 '{"evidence": [{"quote": "x", "quote": "y"}]}': '字段 quote 写了 2 次（"x" 和 "y"）',
                 '[{"id": "A"}, {"id": "B", "id": "C"}]': '第 2 项里字段 id 写了 2 次（"B" 和 "C"）'}
        for text, what in cases.items():
            with self.subTest(text=text), self.assertRaises(JsonProblem) as caught:
                parse_json(text)
            self.assertTrue(caught.exception.what.endswith(what), caught.exception.what)
        with self.assertRaises(JsonProblem) as caught:
            parse_json('{"evidence": [{"quote": "x", "quote": "y"}]}')
        self.assertTrue(caught.exception.what.startswith("evidence 第 1 项里"), caught.exception.what)

    def test_nan_depth_and_size_are_refused(self):
        for text, what in (("[1, NaN]", "第 2 项是 NaN"), ("[" * 30 + "]" * 30, f"嵌套超过了 {kit.MAX_JSON_DEPTH} 层"),
                           ("[" + "1," * 600000 + "1]", "超过了"), ('{"saved": -1e400}', "saved 的数太大，读出来是无穷大"),
                           ('{"url": "https://a.example/\\udc00"}', "url 里有落单的半个字符 \\udc00"),   # 写文件、发请求时才会出错
                           ('{"\\ud800": 1}', "里面有落单的半个字符 \\ud800"), ("[" * 21 + "]" * 21, "嵌套超过了 20 层")):
            with self.subTest(text=text[:20]), self.assertRaises(JsonProblem) as caught:
                parse_json(text)
            self.assertIn(what, caught.exception.what)

    def test_twenty_levels_and_many_repeated_keys_are_read_in_one_pass(self):
        self.assertEqual(parse_json("[" * 20 + "]" * 20), [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]])   # 最外层的括号算第 1 层
        pairs = ",".join(f'"k{n}": 1, "k{n}": 2' for n in range(20000))   # 每个字段都写了两遍：每个重复的字段不能都把全部字段再数一遍
        with self.assertRaises(JsonProblem) as caught:
            parse_json("{" + pairs + "}")
        self.assertEqual(caught.exception.what, "字段 k0 写了 2 次（1 和 2）")
        self.assertEqual(kit.JsonObject([("a", 1), ("b", 2), ("a", 3), ("b", 4)]).duplicates, {"a": [1, 3], "b": [2, 4]})

    def test_one_shape_table_names_the_first_wrong_place_and_guesses_a_misspelt_field(self):
        self.assertEqual(kit.shape_problem({"claim": "c", "source": "D01#1", "qoute": "q"}, kit.EVIDENCE_ITEM, ["evidence", 0]),
                         "evidence 第 1 项缺少字段 quote（有一个 qoute，是不是想写 quote？）")
        self.assertEqual(kit.shape_problem({"saved": 1, "results": [{"title": "t", "url": 3, "snippet": "s", "published": None}]},
                                           retrieval_qa.CACHE_ENTRY), "results 第 1 项的 url 应当是字符串，实际是数字 3")
        self.assertEqual(kit.shape_problem([], retrieval_qa.CACHE_ENTRY), "最外层应当是对象 {saved, results}，实际是数组（0 项）")

    def test_the_shape_words_cover_text_non_empty_lists_optional_fields_and_booleans(self):
        text, many = kit.Text(), kit.Many([kit.Text()])
        self.assertIsNone(kit.shape_problem("D01#1", text))
        self.assertEqual(kit.shape_problem("a\nb", text), "里有控制字符（换行、ESC 之类）")   # 一行文字
        self.assertIsNone(kit.shape_problem("a\nb", kit.Text(lines=True)))                  # 正文可以换行
        self.assertEqual(kit.shape_problem("\u200b", text), "「\\u200b」里没有字或数字：只有标点，或零宽字符、方向标记这样看不见的字符")
        self.assertEqual(kit.shape_problem([], many), "最外层应当是非空的字符串数组，实际是数组（0 项）")
        self.assertIsNone(kit.shape_problem([], [kit.Text()]))   # 不写 Many 的数组可以是空的
        self.assertIsNone(kit.shape_problem({}, {"deny?": many}))   # 名字以 ? 结尾的字段可以不写，写了就要合样子
        self.assertEqual(kit.shape_problem({"deny": []}, {"deny?": many}), "deny 应当是非空的字符串数组，实际是数组（0 项）")
        self.assertEqual(kit.shape_problem(1, bool), "最外层应当是布尔值（true 或 false），实际是数字 1")
        self.assertEqual(kit.shape_problem(True, int), "最外层应当是数字，实际是布尔值 true")   # true 不算数字
        self.assertEqual(kit.shape_problem({"a": [1]}, {"a": [{"b": str}]}, root="第 2 条记录"),
                         "第 2 条记录的 a 第 1 项应当是对象 {b}，实际是数字 1")

    def test_a_blank_field_name_is_shown_and_a_bad_status_is_named_once(self):
        with self.assertRaises(JsonProblem) as caught:
            parse_json('{"evidence": [{"": NaN}]}')
        self.assertEqual(caught.exception.what, 'evidence 第 1 项的 "" 是 NaN，JSON 不允许 NaN 和 Infinity')
        with self.assertRaises(NoAnswer) as caught:   # status 不对只说一次，不再加一句“应当是字符串”
            kit.checked_answer({"content": '{"status": null, "draft": "x", "sources": ["D01#1"]}', "finish_reason": "stop"}, ["D01#1"])
        self.assertEqual(caught.exception.problems, ["status 是null，只允许 draft 或 missing"])
        self.assertEqual(kit.describe_value(int("9" * 1900)), "数字 " + "9" * 20 + "…")   # 上千位的数不整个印出来

    def test_an_evidence_item_with_a_forged_quote_or_source_written_first_is_rejected(self):
        # 先写伪造的、再写真的：json 只留后一个，核对的就是真的那个，伪造的那个却也在文件里
        base = ('{"status": "draft", "draft": "对话记录保存 90 天。", "sources": ["D04#1"], '
                '"evidence": [{"claim": "对话记录保存 90 天", %s}]}')
        for fields, key in (('"source": "D04#1", "quote": "保存 900 天", "quote": "保存 90 天"', "quote"),
                            ('"source": "D01#1", "source": "D04#1", "quote": "保存 90 天"', "source")):
            with self.subTest(key=key):
                code, result = check_draft(base % fields)
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertIn(f"evidence 第 1 项里字段 {key} 写了 2 次", result["problems"][0])


class FoldingTest(unittest.TestCase):
    """fold：检索的关键词、片段编号、[n]、域名只有一种比较写法，读资料时和核对时一样。"""

    def test_what_folding_removes_and_keeps(self):
        cases = {"Ｄ04**#**1\u200e": "d04#1", "D04\u2062#1": "d04#1", "D04\u00ad#1": "d04#1", "\u200b": "", "**": "",
                 " ＡＢＣ ": "abc", "保存 9.0 天": "保存 9.0 天", "D0\ufe0f1#1": "d01#1", "D01\u034f#1": "d01#1",   # 变体选择符、CGJ
                 "\u3164": "", "D01\\#1": "d01#1", "<br>": "<br>", "&nbsp;": "&nbsp;", "a<b 且 b>c": "a<b 且 b>c"}   # HTML 照原样比
        for text, folded in cases.items():
            with self.subTest(text=text):
                self.assertEqual(kit.fold(text), folded)
        self.assertEqual(kit.fold("D01&#35;<b></b>1", as_html=True), "d01#1")   # 找草稿里的编号时，再看一遍网页显示出来的样子

    def test_a_keyword_or_id_that_folds_to_nothing_is_refused_at_load_naming_record_and_field(self):
        for field, value, named in (("keywords", ["试用", "\u200b"], "keywords 第 2 项「\\u200b」"),
                                    ("keywords", ["试用", "**"], "keywords 第 2 项「**」"), ("id", "\u200e", "的 id 「\\u200e」")):
            records = json.loads(json.dumps(SHIPPED))
            records[0][field] = value
            with self.subTest(value=value), tempfile.TemporaryDirectory() as directory:
                path = write_temp(directory, "documents.json", json.dumps(records))
                code, out, err = run_kit(["--retrieve-only", "价格是多少？", "--documents", str(path)])
            self.assertEqual((code, out), (2, ""))   # 这个词折叠成空字符串，在每个问题里都“找得到”：不拦下的话，零命中的问题也去请求模型
            self.assertIn("第 1 条记录", err)
            self.assertIn(named, err)
            self.assertIn("里没有字或数字：只有标点，或零宽字符、方向标记这样看不见的字符", err)
        with tempfile.TemporaryDirectory() as directory:   # 在检查的进程里跑和在真的子进程里跑，看到的一字不差
            records = json.loads(json.dumps(SHIPPED))
            records[0]["keywords"] = ["试用", "\u200b"]
            path = write_temp(directory, "documents.json", json.dumps(records))
            answer = write_temp(directory, "answer.json", '{"status": "draft", "draft": "保存 90 天（D01\u00ad#1）。", "sources": ["D04#1"]}')
            assert_same_in_a_process(self, [(["--retrieve-only", "价格是多少？", "--documents", str(path)], {}),
                                            (["--check-draft", str(answer), "保存多久？"], {})])

    def test_an_unsent_id_is_rejected_however_it_is_dressed(self):
        # 只发送了 D01#1；D04#1 在资料库里
        for form in ("D04**#**1", "D04\u200e#1", "D04\u2062#1", "D04\u00ad#1", "[详情](#D04#1)", "#D04#1", "Ｄ04＃1", "D0\ufe0f4#1",
                     "D04\\#1", "D04&#35;1", "D04 #1", "[D04 # 1]", "D04\n#1", "D04<b>#</b>1"):   # 标点两边的空白、换行切开、HTML 标签
            with self.subTest(form=form):
                code, result = check_draft({"status": "draft", "draft": f"试用期 7 天，详见 {form}。", "sources": ["D01#1"]}, "试用几天？")
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertIn("来源「D04#1」不在这次发送的资料里", result["problems"][0])

    def test_ordinary_text_is_not_taken_for_an_id_a_tag_or_another_domain(self):
        import retrieval_qa
        hit = lambda hit_id, text: {"id": hit_id, "title": "规则", "text": text, "matched": []}   # noqa: E731
        hits = [hit("1.1", "体验版试用期 7 天。"), hit("1.2", "1 个团队只能开通一次体验版。")]
        draft = "1. 体验版试用期 7 天；\n2. 1 个团队只能开通一次体验版。"   # 列表序号“2.”后面跟着“1 个”：不是编号 2.1
        self.assertNotEqual(retrieval_qa.check_grounding(draft, ["1.1", "1.2"], hits, "", None, ["1.1", "1.2", "2.1"])["status"], "rejected")
        records = [{"id": "H1", "title": "换行标签", "text": "<br> 是换行，<div> 是块。", "keywords": ["<br>", "<div>", "&nbsp;"]}]
        self.assertEqual([h["id"] for h in retrieval_qa.retrieve("<br> 和 <div> 有什么区别？", records)], ["H1"])   # HTML 的关键词照原样比
        quoted = [hit("S1", "当温度 t<tmax 时正常运行，温度超过 tmax 且持续 5 分钟时报警。")]
        evidence = [{"claim": "温度超过 tmax 且持续 5 分钟时报警", "source": "S1", "quote": "温度超过 tmax 且持续 5 分钟时报警"}]
        self.assertEqual(retrieval_qa.check_grounding("温度超过 tmax 且持续 5 分钟时报警。", ["S1"], quoted, "", evidence)["status"], "draft")
        result = {"title": "t", "url": "https://xn--fa-hia.example/p", "snippet": "记得笔记的免费试用期是十四天，到期以后自动转为免费版。", "published": None}
        self.assertIn("不在只用的名单", retrieval_qa.unusable(result, "试用期", {"allow": ["fass.example"]}))   # faß 和 fass 是两个域名

    def test_a_quote_with_no_letters_after_folding_is_rejected(self):
        answer = {"status": "draft", "draft": "试用期 7 天。", "sources": ["D01#1"],
                  "evidence": [{"claim": "试用期 7 天", "source": "D01#1", "quote": "\uff9e\uff9e"}]}   # 半角浊音符：NFKC 后是组合字符
        code, result = check_draft(answer, "试用几天？")
        self.assertEqual((code, result["status"]), (4, "rejected"))
        self.assertEqual(result["problems"], ["evidence 第 1 项的 quote 「\uff9e\uff9e」里没有字或数字：只有标点，或零宽字符、方向标记这样看不见的字符"])

    def test_a_decimal_point_is_kept_when_quotes_are_compared(self):
        # 片段写的是 90 天；“9.0 天”折叠时若丢了小数点，就和“90 天”一样了
        for number in ("9.0", "9\u066b0", "9,0", "9\u00b70", "9.\u03010", "9 . 0", "9*0", "9_0", "9\u200b0"):   # 阿拉伯文的小数点、逗号、间隔号、夹着附加符号
            answer = {"status": "draft", "draft": f"对话记录保存 {number} 天。", "sources": ["D04#1"],
                      "evidence": [{"claim": f"对话记录保存 {number} 天", "source": "D04#1", "quote": f"保存 {number} 天"}]}
            with self.subTest(number=number):
                code, result = check_draft(answer)
                self.assertEqual((code, result["status"]), (1, "needs_review"))
                self.assertTrue(any(problem.startswith("引文在 D04#1 里") for problem in result["problems"]), result["problems"])
        answer = {"status": "draft", "draft": "对话记录保存 90 天。", "sources": ["D04#1"],
                  "evidence": [{"claim": "对话记录保存 90 天", "source": "D04#1", "quote": "保存 90 天"}]}
        self.assertEqual(check_draft(answer)[0], 0)   # 照抄的引文照常通过

    def test_web_citations_are_compared_after_folding(self):
        sources = [{"n": 1}, {"n": 2}]
        for draft, wrong in (("试用 14 天 [10000]。", "[10000]"), ("试用 14 天 [\u200b3]。", "[3]"), ("试用 14 天 [１]［２］。", None),
                             ("试用 14 天 [1]【5】。", "[5]"), ("【1】试用 14 天 [1]。\n【2】到期降级 [1]。", None),   # 【n】常是列表序号
                             ("依据青政发〔2023〕15号，试用 14 天 [1]。", None), ("试用 14 天 [1][^5]。", "[5]"),   # 〔〕是公文的年份
                             ("试用 14 天 [1][2.0]。", "[2.0]"), ("试用 14 天 [1][5\ufe0f]。", "[5]")):
            with self.subTest(draft=draft):
                problems = retrieval_qa.citation_problems({"status": "draft", "draft": draft, "sources": ["1", "2"]}, sources)
                self.assertEqual(problems, [f"草稿里的「{wrong}」不是这次的来源编号（只有 1–2）"] if wrong else [])

    def test_a_denied_domain_is_denied_in_every_spelling(self):
        with tempfile.TemporaryDirectory() as directory:
            policy = retrieval_qa.read_domains(str(write_temp(directory, "domains.json", '{"deny": ["ＥＶＩＬ。example"]}')))
        self.assertEqual(policy, {"deny": ["evil.example"]})
        with tempfile.TemporaryDirectory() as directory:
            policy["deny"] += retrieval_qa.read_domains(str(write_temp(directory, "more.json",
                                                              '{"deny": ["127.0.0.1", "faß.example", "[2001:db8::1]"]}')))["deny"]
        for host in ("evil.example.", "evil．example", "evil。example", "ｅｖｉｌ.example", "EVIL.example", "a.evil\u200b.example",
                     "evil.example\uff61", "evil.example\\@good.example", "evil%2Eexample", "%65vil.example",   # 浏览器打开的都是 evil.example
                     "2130706433", "0x7f.1", "127.1", "xn--fa-hia.example",   # 127.0.0.1 的另几种写法；IDNA 2008 的 faß
                     "[2001:0db8:0000::0001]", "[2001:DB8:0:0:0:0:0:1]", "[2001:db8::1%25eth0]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"):
            with self.subTest(host=host):
                result = {"title": "t", "url": f"https://{host}/p", "snippet": "记得笔记的免费试用期是十四天，到期以后自动转为免费版。", "published": None}
                reason = retrieval_qa.unusable(result, "试用期", policy)
                self.assertTrue(reason and "不用的名单" in reason, reason)
        self.assertIsNone(retrieval_qa.unusable({"title": "t", "url": "https://good.example/evil.example", "snippet": "记得笔记的免费试用期是十四天，到期以后自动转为免费版。",
                                        "published": None}, "试用期", policy))


def run_web(server, args, **env):
    """真的运行 retrieval_qa.py --web，对着假搜索接口。返回 (退出码, 输出的 JSON 或 None, stderr)。"""
    code, out, err = run_kit(["--web", *args], env=clean_env(SEARCH_PROVIDER=server.provider, SEARCH_API_URL=server.url, **env),
                             documents=None)
    return code, json.loads(out) if out else None, err


class WebFailureTest(unittest.TestCase):
    """搜索失败，不管响应体和头是什么样子，都是一个 JSON、退出码 3；连同重试有一个总时限。"""

    def test_a_body_too_big_or_never_ending_is_one_json_object_with_exit_3(self):
        for fault in ("huge", "endless"):
            with self.subTest(fault=fault), StandInSearch() as server:
                server.fault(fault)
                code, result, err = run_web(server, ["--retrieve-only", "记得笔记的试用期"])
            self.assertEqual((code, result["status"]), (3, "error"), err)
            self.assertIn("响应体超过 1 MiB 上限", result["problems"][0])
            self.assertNotIn("Traceback", err)

    def test_a_retry_after_that_is_not_ascii_digits_is_ignored(self):
        for said in ("²", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "9" * 40):
            with self.subTest(said=said):
                self.assertIsNone(retrieval_qa.retry_after({"retry-after": said}))
        self.assertEqual(retrieval_qa.retry_after({"retry-after": "2"}), 2.0)
        with StandInSearch() as server, mock.patch("sys.stderr"):
            server.fault("429", retry_after="²")   # 只按自己的退避等，再试一次就成功
            results = retrieval_qa.search_web("记得笔记的试用期", {"provider": "bocha", "url": server.url, "official": False}, None,
                                     sleep=lambda seconds: None)
        self.assertTrue(results)

    def test_one_deadline_covers_every_attempt(self):
        with StandInSearch() as server:
            for _ in range(retrieval_qa.RETRIES + 1):
                server.fault("silent")
            started = time.monotonic()
            code, result, err = run_web(server, ["--retrieve-only", "--timeout", "1", "记得笔记的试用期"])
            spent = time.monotonic() - started
        self.assertEqual((code, result["status"]), (3, "error"), err)
        self.assertLess(spent, 4)   # 不是每次 1 秒、试三次，外加两次退避
        self.assertEqual(len(server.requests), 1)
        self.assertIn("总时限 1 秒内来不及再试", result["problems"][0])
        self.assertLessEqual(retrieval_qa.SEARCH_DEADLINE, 30)

    def test_a_charset_no_codec_knows_is_one_failure(self):
        for charset in ("utf\x00-8", "no-such-charset", "utf-7"):
            with self.subTest(charset=charset), self.assertRaises(NoAnswer):
                retrieval_qa.parse_search_response({"content-type": f"application/json; charset={charset}"}, b'{"a": "\xff"}')
        self.assertFalse(kit.is_utf8("utf\x00-8"))

    def test_dates_are_read_in_iso_8601_and_rfc_2822(self):
        payload = {"query": "q", "results": [{"title": "t", "url": "https://a.example/", "content": "x", "published_date": date}
                                             for date in ("Mon, 10 Feb 2025 08:00:00 GMT", "2025-02-10T08:00:00Z", "2025-02-30",
                                                          "昨天", "Mon, 99 Feb 2025 08:00:00 GMT")]}
        self.assertEqual([result["published"] for result in retrieval_qa.adapt("tavily", payload)],
                         ["2025-02-10", "2025-02-10", None, None, None])

    def test_at_most_max_results_are_read_from_one_response(self):
        payload = {"query": "q", "results": [{"title": f"t{n}", "url": f"https://a.example/{n}", "content": "x"} for n in range(1200)]}
        with mock.patch("sys.stderr") as stderr:
            results = retrieval_qa.adapt("tavily", payload)
        self.assertEqual(len(results), retrieval_qa.MAX_RESULTS)
        self.assertIn(f"只看前 {retrieval_qa.MAX_RESULTS} 条", "".join(str(call.args[0]) for call in stderr.write.call_args_list))


SEARCH_KEY = "BSAq7Lz0x9searchKey4471"   # 不像 sk-…，“看着像密钥”的规则认不出它：只能靠“这是配置了的密钥”


class SecretTest(unittest.TestCase):
    """配置了的密钥，不管出现在从哪里来的文字里，都不写出去、不发给模型。"""

    def setUp(self):
        self.saved = list(stand_in_search.PAGES)
        echo = dict(self.saved[0], title=self.saved[0]["title"] + f" {SEARCH_KEY}",   # 搜索结果抄着密钥：标题、网址印在 stderr 上
                    url=self.saved[0]["url"] + f"?token={SEARCH_KEY}", snippet=self.saved[0]["snippet"] + f" 调试信息：key={SEARCH_KEY}。")
        stand_in_search.PAGES[:] = [echo] + self.saved[1:]

    def tearDown(self):
        stand_in_search.PAGES[:] = self.saved

    def test_a_search_key_echoed_by_a_result_is_not_printed_nor_sent_to_the_model(self):
        question = self.saved[0]["title"]
        self.assertIn(f"{SEARCH_KEY}", stand_in_search.PAGES[0]["title"])
        with StandInSearch() as server:
            code, result, err = run_web(server, ["--retrieve-only", question], SEARCH_API_KEY=SEARCH_KEY)
            self.assertEqual(code, 0, err)
            self.assertIn("key=***", json.dumps(result, ensure_ascii=False))   # 这条结果还在，只是密钥抹掉了
            with StandIn() as model:
                model.reply(json.dumps({"status": "missing", "draft": "资料里没有提到。", "sources": []}, ensure_ascii=False))
                code, result, err = run_web(server, [question], SEARCH_API_KEY=SEARCH_KEY, LOCAL_MODEL_URL=model.url,
                                            LOCAL_MODEL_NAME="m")
                sent = json.dumps(model.requests, ensure_ascii=False)
        self.assertIn("key=***", sent)
        for text in (sent, json.dumps(result, ensure_ascii=False), err):
            self.assertNotIn(SEARCH_KEY, text)

    def test_a_key_is_hidden_before_text_is_cut_short_or_escaped(self):
        with mock.patch.dict(os.environ, {"SEARCH_API_KEY": SEARCH_KEY}):
            title = "标" * 110 + SEARCH_KEY   # 截到 120 个字时正好切在密钥中间：前半截也不能印出来
            self.assertNotIn(SEARCH_KEY[:6], retrieval_qa.adapt("tavily", {"query": "q", "results": [{"title": title, "url": "https://a.example/",
                                                                                              "content": "x"}]})[0]["title"])
            self.assertNotIn(SEARCH_KEY[:6], kit.visible(SEARCH_KEY + "尾巴", 20))
            with self.assertRaises(NoAnswer) as caught:   # 不认识的格式时说出看到的字段名：字段名就是密钥
                retrieval_qa.adapt("bocha", {SEARCH_KEY: 1})
            self.assertNotIn(SEARCH_KEY[:6], caught.exception.problems[0])
        key = "abcd&efgh<ijkl>mnop1234"
        with mock.patch.dict(os.environ, {"SEARCH_API_KEY": key}), tempfile.TemporaryDirectory() as directory:
            page = Path(directory, "page.html")
            retrieval_qa.write_html(page, {"question": "q", "draft": f"试用 14 天 [1]，{key}", "status": "draft",
                                  "cited": [{"n": 1, "title": key, "url": "https://a.example/", "published": None}]})
            text = page.read_text(encoding="utf-8")
        self.assertNotIn("abcd&amp;efgh", text)
        self.assertIn("***", text)

    def test_every_configured_and_typed_key_is_hidden(self):
        with mock.patch.dict(os.environ, {"DEEPSEEK_API_KEY": "ds-0123456789", "LOCAL_MODEL_API_KEY": "local-key-42",
                                          "SEARCH_API_KEY": SEARCH_KEY}), mock.patch.object(kit, "TYPED_KEYS", []):
            kit.checked_key("typed-key-0987", "SEARCH_API_KEY", typed=True)
            cut = f"h {SEARCH_KEY[:-3]} i {SEARCH_KEY[4:]} j"   # 少抄了头尾几个字的半截密钥
            self.assertEqual(kit.hide_secrets(cut), "h *** i *** j")
            text = (f"a ds-0123456789 b local-key-42 c {SEARCH_KEY[:6]}\u200b{SEARCH_KEY[6:]} d typed-key-0987 e LOCAL-KEY-42 "
                    f"f {chr(0xad).join(SEARCH_KEY)} g {SEARCH_KEY.upper().translate({c: c + 0xFEE0 for c in range(0x21, 0x7f)})}")
            self.assertEqual(kit.hide_secrets(text), "a *** b *** c *** d *** e *** f *** g ***")   # 夹着软连字符、全角、大写


class CacheTest(unittest.TestCase):
    """搜索缓存只在自己能写的文件夹里，不跟随链接，用之前验过样子和时间；用不了的说一句，当作没有。"""
    TARGET = {"provider": "bocha", "url": "http://127.0.0.1:9/search", "official": False}

    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        patcher = mock.patch("tempfile.gettempdir", return_value=self.directory.name)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(self.directory.cleanup)

    def failing(self, *args):
        raise kit.make_call_failure("搜索失败：超时")

    def use_cache(self):
        """搜索失败时：(缓存的结果或 NoAnswer, stderr)。"""
        with mock.patch("sys.stderr") as stderr:
            try:
                outcome = retrieval_qa.cached_search("试用几天", self.TARGET, None, search=self.failing)
            except NoAnswer as failure:
                outcome = failure
        return outcome, "".join(str(call.args[0]) for call in stderr.write.call_args_list)

    def plant(self, entry):
        Path(retrieval_qa.cache_path(self.TARGET, "试用几天")).write_text(json.dumps(entry), encoding="utf-8")

    @unittest.skipUnless(hasattr(os, "getuid"), "Windows 的临时文件夹本来就只归一个用户")
    def test_the_folder_is_private_and_a_shared_one_is_not_used(self):
        folder = retrieval_qa.cache_folder()
        self.assertEqual(os.stat(folder).st_mode & 0o777, 0o700)
        self.plant({"saved": time.time(), "results": []})
        os.chmod(folder, 0o777)   # 别人也能往里放东西：不用
        outcome, said = self.use_cache()
        self.assertIsInstance(outcome, NoAnswer)
        self.assertIn("不是只有你自己能写的文件夹", said)

    @unittest.skipUnless(hasattr(os, "O_NOFOLLOW"), "没有 O_NOFOLLOW 的系统")
    def test_a_link_at_the_cache_name_is_neither_followed_nor_overwritten(self):
        victim = Path(self.directory.name, "victim.txt")
        victim.write_text("别人的文件", encoding="utf-8")
        os.symlink(victim, retrieval_qa.cache_path(self.TARGET, "试用几天"))
        outcome, said = self.use_cache()
        self.assertIsInstance(outcome, NoAnswer)
        self.assertIn("这是一个链接", said)
        with mock.patch("sys.stderr") as stderr:
            retrieval_qa.cached_search("试用几天", self.TARGET, None, search=lambda *args: [])
        self.assertIn("没有存进缓存（这是一个链接", "".join(str(call.args[0]) for call in stderr.write.call_args_list))
        self.assertEqual(victim.read_text(encoding="utf-8"), "别人的文件")

    @unittest.skipUnless(hasattr(os, "mkfifo"), "没有命名管道的系统")
    def test_a_named_pipe_at_the_cache_name_is_not_waited_on(self):
        os.mkfifo(retrieval_qa.cache_path(self.TARGET, "试用几天"))   # 打开它就会一直等下去
        outcome, said = self.use_cache()
        self.assertIsInstance(outcome, NoAnswer)
        self.assertIn("不是普通文件", said)

    def test_dates_in_a_cache_entry_are_read_again(self):
        odd = [{"title": "t", "url": "https://a.example/", "snippet": "x", "published": date} for date in ("2024", "abcd-ef-gh", "2025-02-10")]
        self.plant({"saved": time.time() - 5, "results": odd})
        outcome, _ = self.use_cache()
        self.assertEqual([result["published"] for result in outcome[0]], [None, None, "2025-02-10"])
        retrieval_qa.source_hit(dict(outcome[0][0], n=1))   # int("2024"[5:7]) 不能变成一段 traceback

    def test_malformed_or_future_entries_are_ignored_with_one_line(self):
        good = {"title": "t", "url": "https://a.example/", "snippet": "x", "published": None}
        for entry, said in (({"a": 1}, "缺少字段 saved"), ([1, 2], "最外层应当是对象"),
                            ({"saved": time.time(), "results": [{"title": "t"}]}, "results 第 1 项缺少字段 url"),
                            ({"saved": time.time(), "results": [dict(good, url=3)]}, "url 应当是字符串"),
                            ({"saved": time.time() + 365 * 86400, "results": [good]}, "存的时间在将来"),
                            ('{"saved": 1, "saved": 2, "results": []}', "字段 saved 写了 2 次")):
            with self.subTest(said=said):
                if isinstance(entry, str):
                    Path(retrieval_qa.cache_path(self.TARGET, "试用几天")).write_text(entry, encoding="utf-8")
                else:
                    self.plant(entry)
                outcome, told = self.use_cache()
                self.assertIsInstance(outcome, NoAnswer)
                self.assertIn(said, told)
                self.assertEqual(told.count("搜索缓存用不了"), 1)
        self.plant({"saved": time.time() - 5, "results": [good]})   # 好的缓存照常用
        outcome, _ = self.use_cache()
        self.assertEqual(outcome[0], [good])


class BoundedWorkTest(unittest.TestCase):
    """从外面来的东西再多再怪，读数量从不出错，核对的工作量有上限，超过上限就交给人，并说出是哪一个上限。"""

    def test_claims_that_contain_each_other_are_checked_once_each(self):
        # “试用 q1”在“试用 q10”里：每条依据若都把已有的“句”再加一遍，28 条依据就要核对几万句
        import retrieval_qa
        chunk = {"id": "P1", "title": "试用", "text": ",".join(f"q{i}" for i in range(2000))}
        evidence = [{"claim": f"试用 q{i}", "source": "P1", "quote": f"q{i}"} for i in range(1, 101)]
        seen = []
        with mock.patch.object(retrieval_qa.RULES[0], "find", lambda sentence, cited, context: seen.append(sentence) or []):
            retrieval_qa.check_grounding("试用 q1。", ["P1"], [chunk], "试用几天", evidence)
        self.assertEqual(len(seen), len({id(sentence) for sentence in seen}))   # 每一句只交给规则一次
        self.assertLessEqual(len(seen), len(evidence) + 1)

    def test_reading_numbers_never_raises(self):
        import time
        import retrieval_qa
        for text in ("保存" + "九" * 5000 + "天", "九万" * 3000, "百分之" + "九" * 3000, "9" * 5000 + "个半小时",
                     "九" * 3000 + "点", "1" * 5000 + ".5 万元", "零点" + "五" * 5000, "试用" + "九万" * 991 + "天？"):
            with self.subTest(text=text[:12]):
                started = time.perf_counter()
                self.assertEqual(retrieval_qa.amounts(text), {})   # 太长的一串数字不是数量：一个也不读，不会超出整数位数或递归的上限
                self.assertLess(time.perf_counter() - started, 1.0)
        self.assertEqual(retrieval_qa.amounts("一千二百三十四万五千六百七十八元，" + "九" * 17 + "元"),
                         {(12345678.0, "元"): "一千二百三十四万五千六百七十八元"})   # 17 个九不是数量

    def test_a_clock_is_never_looked_for_from_inside_a_run_of_spaces(self):
        # 钟点的写法以可有可无的“下午”和空白开头：从一长串空格的每个位置找起，就是长度的平方（2000 个空格要一两秒）
        import model_reply_assistant
        import retrieval_qa
        self.assertIsNone(re.match(model_reply_assistant.CLOCK, "   9:30 9 点"))
        self.assertEqual(retrieval_qa.amounts("下午   3:00，" + " " * 50 + "9 点半"), {(900, "时刻"): "下午   3:00", (570, "点钟"): "9 点半"})

    def test_a_question_piped_in_is_read_only_up_to_a_bound(self):
        import io
        import retrieval_qa
        from kit_helpers import run_main
        stdin = io.StringIO("问" * 1_000_000)   # 把一个大文件灌进来：不先整个读进内存再说太长
        with mock.patch("sys.stdin", stdin):
            code, out, err = run_main(retrieval_qa, ["--retrieve-only"])
        self.assertEqual((code, out), (2, ""))
        self.assertIn(f"超过上限 {kit.MAX_QUESTION_CHARS} 字", err)
        self.assertLessEqual(stdin.tell(), 4 * kit.MAX_QUESTION_CHARS + 2)

    def test_a_question_of_numerals_under_the_length_cap_is_checked_with_and_without_evidence(self):
        question = "试用" + "九万" * 991 + "天？"   # 1984 个字，问题的上限是 2000
        answer = {"status": "draft", "draft": "试用期 7 天。", "sources": ["D01#1"]}
        for evidence in (None, [{"claim": "试用期 7 天", "source": "D01#1", "quote": "试用期 7 天"}]):
            with self.subTest(evidence=bool(evidence)):
                code, result = check_draft(dict(answer, evidence=evidence), question)
                self.assertEqual((code, result["status"]), (0, "draft"))

    def test_too_much_evidence_goes_to_a_person_naming_the_cap(self):
        import retrieval_qa
        items = retrieval_qa.MAX_EVIDENCE + 1
        answer = {"status": "draft", "draft": "对话记录保存 90 天。", "sources": ["D04#1"],
                  "evidence": [{"claim": "对话记录保存 90 天", "source": "D04#1", "quote": "保存 90 天"}] * items}
        code, result = check_draft(answer)
        self.assertEqual((code, result["status"]), (1, "needs_review"))
        self.assertEqual(result["problems"], [f"依据有 {items} 条，超过逐句核对的上限 {retrieval_qa.MAX_EVIDENCE} 条，请人工复核"])
        claim = "、".join(f"{n} 元" for n in range(3 * retrieval_qa.MAX_DRAFT_NUMBERS))   # 一条 claim 里三百个数
        answer = dict(answer, evidence=[{"claim": claim, "source": "D04#1", "quote": "保存 90 天"}])
        code, result = check_draft(answer)
        self.assertEqual((code, result["status"]), (1, "needs_review"))
        self.assertRegex(result["problems"][0], "^草稿连同依据有 \\d+ 个(字|数字)，超过逐句核对的上限")

    def test_arithmetic_is_worked_out_once_per_answer_over_a_bounded_set_of_numbers(self):
        import retrieval_qa
        from bench import largest_evidence_answer
        answer = largest_evidence_answer()   # 上限以内最费事的：95 个数的草稿，100 条依据，每条都有一个对不上的数
        hits = [{"id": "D04#1", "title": "数据安全", "text": SHIPPED[4]["text"], "matched": []}]
        rounds = []   # one_step 每算一步要 round 三次：数一数，就知道算式表算了几遍、用了多少个数
        getattr(retrieval_qa.one_step, "cache_clear", lambda: None)()
        with mock.patch.object(retrieval_qa, "round", create=True, new=lambda *args: (rounds.append(1), round(*args))[1]):
            verdict = retrieval_qa.check_grounding(answer["draft"], ["D04#1"], hits, "保存多久？", answer["evidence"], ["D04#1"])
        self.assertEqual(verdict["status"], "needs_review")
        operands = retrieval_qa.MAX_OPERANDS
        self.assertLessEqual(len(rounds), operands * (operands - 1) * 6 * 3)   # 只算一遍，最多 MAX_OPERANDS 个数
