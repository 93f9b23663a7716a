import os
import tempfile
import unittest

from appcfg.settings import load_settings


class SettingsTest(unittest.TestCase):
    def write_env(self, text):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        path = os.path.join(tmp.name, ".env")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_defaults(self):
        path = self.write_env("# nothing set\n")
        self.assertEqual(load_settings(path), {"host": "127.0.0.1", "port": 8000, "debug": False})

    def test_overrides(self):
        path = self.write_env('export HOST=0.0.0.0\nPORT=9090  # public\nDEBUG="yes"\n')
        self.assertEqual(load_settings(path), {"host": "0.0.0.0", "port": 9090, "debug": True})


if __name__ == "__main__":
    unittest.main()
