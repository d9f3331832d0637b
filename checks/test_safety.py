"""从外面来的输入按类处理：一个严格的 JSON 读法、一种文字折叠、有上限的工作量、不外泄的密钥、只属于自己的缓存、
搜索失败一律是一个 JSON。每组检查对着一种机制：把那个机制拿掉，这一组就会失败。期望值按规则写。"""
import json
import tempfile
import unittest

from kit_helpers import SHIPPED_DOCUMENTS, run_json, run_kit, write_temp

import model_reply_assistant
from model_reply_assistant import JsonProblem, parse_json

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
        for text, what in (("[1, NaN]", "第 2 项是 NaN"), ("[" * 30 + "]" * 30, f"嵌套超过了 {model_reply_assistant.MAX_JSON_DEPTH} 层"),
                           ("[" + "1," * 600000 + "1]", "超过了")):
            with self.subTest(text=text[:20]), self.assertRaises(JsonProblem) as caught:
                parse_json(text)
            self.assertIn(what, caught.exception.what)

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
                 " ＡＢＣ ": "abc", "保存 9.0 天": "保存 9.0 天"}
        for text, folded in cases.items():
            with self.subTest(text=text):
                self.assertEqual(model_reply_assistant.fold(text), folded)

    def test_a_keyword_or_id_that_folds_to_nothing_is_refused_at_load_naming_record_and_field(self):
        for field, value, named in (("keywords", ["试用", "\u200b"], 'keywords 第 2 项 "\\u200b"'),
                                    ("keywords", ["试用", "**"], 'keywords 第 2 项 "**"'), ("id", "\u200e", "字段 id")):
            records = json.loads(json.dumps(SHIPPED))
            records[0][field] = value
            with self.subTest(value=value), tempfile.TemporaryDirectory() as directory:
                path = write_temp(directory, "documents.json", json.dumps(records))
                code, out, err = run_kit(["--retrieve-only", "价格是多少？", "--documents", str(path)])
            self.assertEqual((code, out), (2, ""))   # 以前这个词折叠成空字符串，在每个问题里都“找得到”：零命中的问题也去请求模型
            self.assertIn("第 1 条记录", err)
            self.assertIn(named, err)
            self.assertIn("比较时什么也不剩", err)

    def test_an_unsent_id_is_rejected_however_it_is_dressed(self):
        # 只发送了 D01#1；D04#1 在资料库里
        for form in ("D04**#**1", "D04\u200e#1", "D04\u2062#1", "D04\u00ad#1", "[详情](#D04#1)", "#D04#1", "Ｄ04＃1"):
            with self.subTest(form=form):
                code, result = check_draft({"status": "draft", "draft": f"试用期 7 天，详见 {form}。", "sources": ["D01#1"]}, "试用几天？")
                self.assertEqual((code, result["status"]), (4, "rejected"))
                self.assertIn("来源「D04#1」不在这次发送的资料里", result["problems"][0])

    def test_a_quote_with_no_letters_after_folding_is_rejected(self):
        answer = {"status": "draft", "draft": "试用期 7 天。", "sources": ["D01#1"],
                  "evidence": [{"claim": "试用期 7 天", "source": "D01#1", "quote": "\uff9e\uff9e"}]}   # 半角浊音符：NFKC 后是组合字符
        code, result = check_draft(answer, "试用几天？")
        self.assertEqual((code, result["status"]), (4, "rejected"))
        self.assertEqual(result["problems"], ["evidence 第 1 项的 quote 里没有字"])

    def test_a_decimal_point_is_kept_when_quotes_are_compared(self):
        # 片段写的是 90 天；“9.0 天”折叠时若丢了小数点，就和“90 天”一样了
        answer = {"status": "draft", "draft": "对话记录保存 9.0 天。", "sources": ["D04#1"],
                  "evidence": [{"claim": "对话记录保存 9.0 天", "source": "D04#1", "quote": "保存 9.0 天"}]}
        code, result = check_draft(answer)
        self.assertEqual((code, result["status"]), (1, "needs_review"))
        self.assertTrue(any(problem.startswith("引文在 D04#1 里") for problem in result["problems"]), result["problems"])

    def test_web_citations_are_compared_after_folding(self):
        sources = [{"n": 1}, {"n": 2}]
        for draft, wrong in (("试用 14 天 [10000]。", "[10000]"), ("试用 14 天 [\u200b3]。", "[3]"), ("试用 14 天 [１]［２］。", None)):
            with self.subTest(draft=draft):
                problems = model_reply_assistant.citation_problems({"status": "draft", "draft": draft, "sources": ["1", "2"]}, sources)
                self.assertEqual(problems, [f"草稿里的「{wrong}」不是这次的来源编号（只有 1–2）"] if wrong else [])

    def test_a_denied_domain_is_denied_in_every_spelling(self):
        with tempfile.TemporaryDirectory() as directory:
            policy = model_reply_assistant.read_domains(str(write_temp(directory, "domains.json", '{"deny": ["ＥＶＩＬ。example"]}')))
        self.assertEqual(policy, {"deny": ["evil.example"]})
        for host in ("evil.example.", "evil．example", "evil。example", "ｅｖｉｌ.example", "EVIL.example", "a.evil\u200b.example",
                     "evil.example\uff61"):
            with self.subTest(host=host):
                result = {"title": "t", "url": f"https://{host}/p", "snippet": "记得笔记的免费试用期是十四天，到期以后自动转为免费版。", "published": None}
                reason = model_reply_assistant.unusable(result, "试用期", policy, None)
                self.assertTrue(reason and "不用的名单" in reason, reason)
