"""第 03 课的三个练习，在套件的临时副本里真的做一遍；仓库里的资料文件不动。"""
import json
import unittest

from kit_helpers import KitCopy, assert_same_in_a_process, student_documents


def hit_ids(result):
    return [hit["id"] for hit in result["hits"]]


class ExerciseTest(unittest.TestCase):
    def setUp(self):
        self.kit = KitCopy()
        self.addCleanup(self.kit.close)

    def ask(self, question):
        code, out, err = self.kit.run(["--retrieve-only", question])
        self.assertEqual(code, 0, err)
        return json.loads(out)

    def edit_record(self, record_id, change):
        records = self.kit.records()
        change(next(r for r in records if r["id"] == record_id))
        self.kit.write_records(records)

    def test_exercise_1_add_a_synonym_keyword(self):
        self.assertEqual(self.ask("能免费用多久？")["status"], "no_hits")
        self.edit_record("D01#1", lambda r: r["keywords"].append("免费用多久"))
        result = self.ask("能免费用多久？")
        self.assertEqual(hit_ids(result), ["D01#1"])
        self.assertEqual(result["hits"][0]["matched"], ["免费用多久"])
        self.kit.restore()
        self.assertEqual(self.ask("能免费用多久？")["hits"], [])

    def test_exercise_2_change_the_fact(self):
        self.edit_record("D01#1", lambda r: r.update(text=r["text"].replace("7 天", "14 天")))
        hit = self.ask("试用几天？")["hits"][0]
        self.assertIn("14 天", hit["text"])
        self.assertNotIn("7 天", hit["text"])
        self.kit.restore()
        self.assertIn("7 天", self.ask("试用几天？")["hits"][0]["text"])

    def test_exercise_3_remove_the_record(self):
        records = [r for r in self.kit.records() if r["id"] != "D01#1"]
        self.kit.write_records(records)
        result = self.ask("试用几天？")
        self.assertEqual((result["status"], result["hits"], result["model_called"]), ("no_hits", [], False))
        self.kit.restore()
        self.assertEqual(hit_ids(self.ask("试用几天？")), ["D01#1"])

    def test_the_kit_file_is_untouched(self):
        documents = student_documents()
        if not documents.is_file():   # 资料文件不在：“资料文件本身”那项检查已经点名报了，这里不再多一个 traceback
            self.skipTest(f"{documents.name} 不在，见资料文件那项检查")
        before = documents.read_bytes()
        self.edit_record("D01#1", lambda r: r["keywords"].append("免费用多久"))
        self.assertEqual(documents.read_bytes(), before)



class SameInAProcessTest(unittest.TestCase):
    """这一组的命令多数在本进程里运行（kit_helpers.run_kit）。抽几条有代表性的，在真的子进程里再跑一遍，
    退出码、stdout、stderr 必须一字不差：这一组没有哪种命令只在进程内查过。"""

    def test_a_copy_of_the_kit_before_and_after_an_edit(self):
        kit = KitCopy()
        self.addCleanup(kit.close)
        calls = [(["--retrieve-only", "能免费试用吗？"], {"script": kit.path / "retrieval_qa.py"})]
        assert_same_in_a_process(self, calls)
        kit.documents.write_text("[", encoding="utf-8")   # 学生改到一半存了盘
        assert_same_in_a_process(self, calls)


if __name__ == "__main__":
    unittest.main()
