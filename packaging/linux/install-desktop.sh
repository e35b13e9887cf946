#!/bin/sh
# Install (or --uninstall) melgui's desktop entry, AppStream metainfo and icons for the
# current user, under ${XDG_DATA_HOME:-~/.local/share}.
#
#   install-desktop.sh [--exec COMMAND] [--uninstall]
#
# Works from a checkout (packaging/linux/) and from the PyInstaller bundle's folder, where
# it sits beside the `melgui` executable. --exec defaults to that executable in a bundle,
# else to `melgui` on PATH (a pip install).
set -eu

APP_ID=ai.meliai.melgui
SIZES="16 24 32 48 64 128 256 512"

die() { echo "install-desktop: $*" >&2; exit 1; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
exec_cmd=""
uninstall=0
while [ $# -gt 0 ]; do
    case "$1" in
        --exec) [ $# -ge 2 ] || die "--exec needs a command"; exec_cmd=$2; shift 2 ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done

data_home=${XDG_DATA_HOME:-}
if [ -z "$data_home" ]; then
    [ -n "${HOME:-}" ] || die "neither XDG_DATA_HOME nor HOME is set"
    data_home=$HOME/.local/share
fi
case "$data_home" in /*) ;; *) die "XDG_DATA_HOME must be an absolute path: $data_home" ;; esac

apps=$data_home/applications
metainfo=$data_home/metainfo
hicolor=$data_home/icons/hicolor

refresh_caches() {
    if command -v update-desktop-database >/dev/null 2>&1; then
        update-desktop-database -q "$apps" 2>/dev/null || true
    fi
    touch "$hicolor" 2>/dev/null || true
    if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$hicolor/index.theme" ]; then
        gtk-update-icon-cache -q -t -f "$hicolor" 2>/dev/null || true
    fi
}

if [ "$uninstall" = 1 ]; then
    rm -f "$apps/$APP_ID.desktop" "$metainfo/$APP_ID.metainfo.xml" \
        "$hicolor/scalable/apps/$APP_ID.svg"
    for size in $SIZES; do rm -f "$hicolor/${size}x${size}/apps/$APP_ID.png"; done
    refresh_caches
    echo "install-desktop: removed melgui's desktop entry, metainfo and icons from $data_home"
    exit 0
fi

# Sources: beside this script (checkout: packaging/linux; bundle: share/), icons in the
# resources (checkout: resources/icons; bundle: _internal/melgui/assets/icons).
share=""
for dir in "$here" "$here/share"; do
    if [ -f "$dir/$APP_ID.desktop" ]; then share=$dir; break; fi
done
[ -n "$share" ] || die "cannot find $APP_ID.desktop next to $0"
icons=""
for dir in "$here/../../resources/icons" "$here/_internal/melgui/assets/icons"; do
    if [ -f "$dir/melgui.svg" ]; then icons=$(CDPATH='' cd -- "$dir" && pwd); break; fi
done
[ -n "$icons" ] || die "cannot find melgui's icons (resources/icons) near $0"

if [ -z "$exec_cmd" ]; then
    if [ -x "$here/melgui" ] && [ -f "$here/melgui" ]; then
        exec_cmd=$here/melgui
    elif command -v melgui >/dev/null 2>&1; then
        exec_cmd=$(command -v melgui)
    else
        die "no melgui executable here or on PATH; pass --exec /path/to/melgui"
    fi
fi
case "$exec_cmd" in
    */*) case "$exec_cmd" in /*) ;; *) exec_cmd=$(pwd)/$exec_cmd ;; esac
         [ -x "$exec_cmd" ] || die "not an executable: $exec_cmd" ;;
esac
case "$exec_cmd" in
    *[!A-Za-z0-9_./+-]*) die "the executable's path must not contain spaces or quotes: $exec_cmd" ;;
esac

mkdir -p "$apps" "$metainfo" "$hicolor/scalable/apps"
tmp=$apps/.$APP_ID.desktop.tmp
sed -e "s|^Exec=melgui |Exec=$exec_cmd |" -e "s|^TryExec=melgui\$|TryExec=$exec_cmd|" \
    "$share/$APP_ID.desktop" >"$tmp"
mv -f "$tmp" "$apps/$APP_ID.desktop"
cp -f "$share/$APP_ID.metainfo.xml" "$metainfo/$APP_ID.metainfo.xml"
cp -f "$icons/melgui.svg" "$hicolor/scalable/apps/$APP_ID.svg"
for size in $SIZES; do
    mkdir -p "$hicolor/${size}x${size}/apps"
    cp -f "$icons/melgui-$size.png" "$hicolor/${size}x${size}/apps/$APP_ID.png"
done
refresh_caches
echo "install-desktop: installed $APP_ID (Exec=$exec_cmd) into $data_home"
