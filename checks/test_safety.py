"""从外面来的输入按类处理：一个严格的 JSON 读法、一种文字折叠、有上限的工作量、不外泄的密钥、只属于自己的缓存、
搜索失败一律是一个 JSON。每组检查对着一种机制：把那个机制拿掉，这一组就会失败。期望值按规则写。"""
import json
import tempfile
import unittest

from kit_helpers import SHIPPED_DOCUMENTS, run_json, write_temp

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
