# SPDX-License-Identifier: Apache-2.0
"""Prints where `cmake --install` puts the urlguard package, relative to the install prefix (argv[1]).

Debian's interpreter reads /usr/lib/python3/dist-packages (packages, scheme deb_system) and
/usr/local/lib/python3.X/dist-packages (local installs, scheme posix_local); every other interpreter and prefix
uses the standard posix_prefix scheme (<prefix>/lib/python3.X/site-packages).
"""
import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
schemes = sysconfig.get_scheme_names()
if prefix == "/usr" and "deb_system" in schemes:
    path = sysconfig.get_path("platlib", "deb_system", vars={"base": "/usr", "platbase": "/usr"})
elif prefix == "/usr/local" and "posix_local" in schemes:
    path = sysconfig.get_path("platlib", "posix_local", vars={"base": "/usr", "platbase": "/usr"})
else:
    path = sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix})
print(os.path.relpath(path, prefix))
