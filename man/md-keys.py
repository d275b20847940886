#!/usr/bin/env python3
# md-keys.py TEMPLATE OUTPUT DOCDIR: copies the scdoc TEMPLATE to OUTPUT with
# each line "@KEYS file.md heading@" replaced by the rows of the first table
# after that heading in DOCDIR/file.md, so that lockstep-config(5) lists
# every setting from the same tables docs/ has, and cannot drift from them.
import re
import sys


def inline(text):
    """Markdown inline to scdoc: links to their text, code to plain."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = text.replace('\\|', '|')
    text = re.sub(r'(?<![\w`])\*([^*]+)\*(?![\w`])', r'\1', text)  # md italics
    text = text.replace('`', '')
    # scdoc's own markup characters, taken literally
    return text.replace('\\', '\\\\').replace('*', '\\*').replace('_', '\\_')


def cells(line):
    parts = re.split(r'(?<!\\)\|', line.strip())
    return [c.strip() for c in parts[1:-1]]


def table(path, heading):
    lines = open(path, encoding='utf-8').read().split('\n')
    at = next((i for i, l in enumerate(lines)
               if l.startswith('#') and heading in l), None)
    if at is None:
        sys.exit(f'md-keys: no heading "{heading}" in {path}')
    i = at + 1
    while i < len(lines) and not lines[i].startswith('|'):
        i += 1
    header = cells(lines[i])
    out = []
    for row in lines[i + 2:]:
        if not row.startswith('|'):
            break
        c = cells(row)
        keys = ', '.join('*' + inline(k.strip()) + '*' for k in c[0].split(', ') if k.strip())
        details = []
        for name, value in zip(header[1:-1], c[1:-1]):
            if value:
                details.append(f'{name}: {inline(value)}')
        text = inline(c[-1])
        if details:
            text = '(' + '; '.join(details) + ') ' + text
        out += [keys, '\t' + text, '']
    if not out:
        sys.exit(f'md-keys: an empty table after "{heading}" in {path}')
    return out


def main():
    template, output, docdir = sys.argv[1:4]
    result = []
    for line in open(template, encoding='utf-8').read().split('\n'):
        m = re.fullmatch(r'@KEYS (\S+) (.+)@', line)
        result += table(f'{docdir}/{m.group(1)}', m.group(2)) if m else [line]
    open(output, 'w', encoding='utf-8').write('\n'.join(result))


main()
