"""A mutated module that its users import as ``from package import module`` is the one
they get: the package keeps the module it imported first as an attribute, which
``from package import module`` hands out before any finder is asked, so forgetting a
module also unbinds it from its package (``isolation.purge``). The client library
(``from kmc.model.kafka import clients``) is imported that way."""
import importlib
import sys

from kmc.mutate.isolation import install_unmutated


def test_a_served_module_reaches_users_that_import_it_from_its_package(tmp_path):
    pkg = tmp_path / "mutate_pkg_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "lib.py").write_text("X = 1\n")
    user_text = "from mutate_pkg_demo import lib\n\n\ndef x():\n    return lib.X\n"
    (pkg / "user.py").write_text(user_text)
    sys.path.insert(0, str(tmp_path))
    finder = None
    try:
        user = importlib.import_module("mutate_pkg_demo.user")
        assert user.x() == 1
        finder = install_unmutated({
            "mutate_pkg_demo.lib": (str(pkg / "lib.py"), "X = 2\n"),
            "mutate_pkg_demo.user": (str(pkg / "user.py"), user_text)})
        assert importlib.import_module("mutate_pkg_demo.user").x() == 2
    finally:
        if finder is not None:
            sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("mutate_pkg_demo")]:
            del sys.modules[name]
