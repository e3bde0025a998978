#!/usr/bin/env python3
"""Asks the X11 window titled TITLE to close, as a window manager's close button does:
a WM_PROTOCOLS / WM_DELETE_WINDOW client message. Xvfb has no window manager, so the
desktop e2e sends it itself. Standard library only (ctypes over libX11).

    python3 wm-close.py TITLE      -> prints the number of windows asked; exit 1 if none
"""
import ctypes
import ctypes.util
import sys

x11 = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
Window = ctypes.c_ulong
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XDefaultRootWindow.restype = Window
x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x11.XInternAtom.restype = ctypes.c_ulong
x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x11.XQueryTree.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(Window), ctypes.POINTER(Window),
                           ctypes.POINTER(ctypes.POINTER(Window)), ctypes.POINTER(ctypes.c_uint)]
x11.XFetchName.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(ctypes.c_char_p)]
x11.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
x11.XFlush.argtypes = [ctypes.c_void_p]
x11.XFree.argtypes = [ctypes.c_void_p]
x11.XCloseDisplay.argtypes = [ctypes.c_void_p]


class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", Window), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]


CLIENT_MESSAGE = 33


def children(dpy, win):
    root, parent, kids, n = Window(), Window(), ctypes.POINTER(Window)(), ctypes.c_uint()
    if not x11.XQueryTree(dpy, win, ctypes.byref(root), ctypes.byref(parent), ctypes.byref(kids), ctypes.byref(n)):
        return []
    out = [kids[i] for i in range(n.value)]
    if kids:
        x11.XFree(kids)
    return out


def name(dpy, win):
    p = ctypes.c_char_p()
    if x11.XFetchName(dpy, win, ctypes.byref(p)) and p.value is not None:
        return p.value.decode("utf-8", "replace")
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    title = sys.argv[1]
    dpy = x11.XOpenDisplay(None)
    if not dpy:
        print("wm-close: cannot open the display", file=sys.stderr)
        return 2
    protocols = x11.XInternAtom(dpy, b"WM_PROTOCOLS", 0)
    delete = x11.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)
    asked = 0
    stack = [x11.XDefaultRootWindow(dpy)]
    while stack:
        win = stack.pop()
        if name(dpy, win) == title:
            ev = XEvent()
            ev.xclient.type = CLIENT_MESSAGE
            ev.xclient.window = win
            ev.xclient.message_type = protocols
            ev.xclient.format = 32
            ev.xclient.data[0] = delete
            ev.xclient.data[1] = 0  # CurrentTime
            x11.XSendEvent(dpy, win, 0, 0, ctypes.byref(ev))
            asked += 1
        else:
            stack.extend(children(dpy, win))
    x11.XFlush(dpy)
    x11.XCloseDisplay(dpy)
    print(asked)
    return 0 if asked else 1


sys.exit(main())
