package io.streamsassign.assignor.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A minimal JSON reader and writer for the harness (the jar has no run-time dependency). */
final class Json {
    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    /** Parses one document: objects as LinkedHashMap, arrays as List, integers as Long. */
    static Object parse(String text) {
        Json json = new Json(text);
        Object value = json.value();
        json.space();
        if (json.i != text.length()) {
            throw new IllegalArgumentException("trailing characters at " + json.i);
        }
        return value;
    }

    private void space() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private Object value() {
        space();
        char ch = s.charAt(i);
        switch (ch) {
            case '{': {
                i++;
                Map<String, Object> map = new LinkedHashMap<>();
                space();
                if (s.charAt(i) == '}') {
                    i++;
                    return map;
                }
                while (true) {
                    space();
                    String key = string();
                    space();
                    expect(':');
                    map.put(key, value());
                    space();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return map;
                }
            }
            case '[': {
                i++;
                List<Object> list = new ArrayList<>();
                space();
                if (s.charAt(i) == ']') {
                    i++;
                    return list;
                }
                while (true) {
                    list.add(value());
                    space();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return list;
                }
            }
            case '"':
                return string();
            case 't':
                i += 4;
                return Boolean.TRUE;
            case 'f':
                i += 5;
                return Boolean.FALSE;
            case 'n':
                i += 4;
                return null;
            default:
                int start = i;
                while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                    i++;
                }
                String number = s.substring(start, i);
                if (number.contains(".") || number.contains("e") || number.contains("E")) {
                    return Double.parseDouble(number);
                }
                return Long.parseLong(number);
        }
    }

    private void expect(char ch) {
        if (s.charAt(i) != ch) {
            throw new IllegalArgumentException("expected " + ch + " at " + i);
        }
        i++;
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char ch = s.charAt(i++);
            if (ch == '"') {
                return out.toString();
            }
            if (ch == '\\') {
                char esc = s.charAt(i++);
                switch (esc) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u':
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                        break;
                    default: out.append(esc);
                }
            } else {
                out.append(ch);
            }
        }
    }

    /** Writes maps, lists, strings, numbers, booleans and null. */
    static String write(Object value) {
        return io.streamsassign.assignor.core.Documents.write(value);
    }
}
