package mcpdriver;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON reader and writer (RFC 8259), no dependencies.
 *
 * <p>Values are {@code Map<String, Object>} (insertion order kept), {@code List<Object>},
 * {@code String}, {@code Boolean}, {@code null}, and numbers: an integer literal is a
 * {@code Long}, or a {@code BigInteger} when it does not fit (a JSON-RPC id beyond 2^53 must
 * come back exactly as it was sent); a literal with a fraction or exponent is a
 * {@code Double}. Garbage (trailing text, leading zeros, lone surrogates in escapes,
 * control characters in strings, duplicate keys) is rejected with a
 * {@link JsonException} that says where.
 */
public final class Json {
    /** The input is not one well-formed JSON value. */
    public static final class JsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public JsonException(String message) {
            super(message);
        }
    }

    private static final int MAX_DEPTH = 512;
    private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** Parses exactly one JSON value, surrounded by optional whitespace only. */
    public static Object parse(String text) {
        Json reader = new Json(text);
        reader.skipSpace();
        Object value = reader.value(0);
        reader.skipSpace();
        if (reader.pos != text.length()) {
            throw reader.error("unexpected text after the value");
        }
        return value;
    }

    /** The compact encoding of a value (one line: control characters are escaped). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    // -- reading --------------------------------------------------------------------------

    private JsonException error(String what) {
        return new JsonException(what + " at offset " + pos);
    }

    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH);
        }
        if (pos >= text.length()) {
            throw error("unexpected end of input");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("invalid literal");
        }
        pos += word.length();
        return value;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> map = new LinkedHashMap<String, Object>();
        pos++; // {
        skipSpace();
        if (pos < text.length() && text.charAt(pos) == '}') {
            pos++;
            return map;
        }
        while (true) {
            skipSpace();
            if (pos >= text.length() || text.charAt(pos) != '"') {
                throw error("expected a string key");
            }
            String key = string();
            if (map.containsKey(key)) {
                throw error("duplicate key \"" + key + "\"");
            }
            skipSpace();
            expect(':');
            skipSpace();
            map.put(key, value(depth + 1));
            skipSpace();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect('}');
            return map;
        }
    }

    private List<Object> array(int depth) {
        List<Object> list = new ArrayList<Object>();
        pos++; // [
        skipSpace();
        if (pos < text.length() && text.charAt(pos) == ']') {
            pos++;
            return list;
        }
        while (true) {
            skipSpace();
            list.add(value(depth + 1));
            skipSpace();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect(']');
            return list;
        }
    }

    private void expect(char c) {
        if (pos >= text.length() || text.charAt(pos) != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private String string() {
        pos++; // opening quote
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw error("unescaped control character in a string");
            }
            if (c != '\\') {
                out.append(c); // surrogate pairs in the input text pass through as they are
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u': out.append(unicodeEscape()); break;
                default: throw error("invalid escape \\" + e);
            }
        }
    }

    /** One \\uXXXX escape, or a high and low surrogate escaped as a pair; a lone half is garbage. */
    private String unicodeEscape() {
        char first = hex4();
        if (Character.isLowSurrogate(first)) {
            throw error("a low surrogate escape without a high one");
        }
        if (!Character.isHighSurrogate(first)) {
            return String.valueOf(first);
        }
        if (!text.startsWith("\\u", pos)) {
            throw error("a high surrogate escape without a low one");
        }
        pos += 2;
        char second = hex4();
        if (!Character.isLowSurrogate(second)) {
            throw error("a high surrogate escape without a low one");
        }
        return new String(new char[] {first, second});
    }

    private char hex4() {
        if (pos + 4 > text.length()) {
            throw error("truncated \\u escape");
        }
        int code = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text.charAt(pos++), 16);
            if (digit < 0) {
                throw error("invalid hex digit in a \\u escape");
            }
            code = code * 16 + digit;
        }
        return (char) code;
    }

    private Object number() {
        int start = pos;
        if (text.charAt(pos) == '-') {
            pos++;
        }
        if (pos >= text.length()) {
            throw error("a lone minus sign");
        }
        if (text.charAt(pos) == '0') {
            pos++;
            if (pos < text.length() && isDigit(text.charAt(pos))) {
                throw error("a leading zero");
            }
        } else if (isDigit(text.charAt(pos))) {
            digits();
        } else {
            throw error("expected a digit");
        }
        boolean integer = true;
        if (pos < text.length() && text.charAt(pos) == '.') {
            integer = false;
            pos++;
            if (pos >= text.length() || !isDigit(text.charAt(pos))) {
                throw error("expected a digit after the decimal point");
            }
            digits();
        }
        if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            integer = false;
            pos++;
            if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                pos++;
            }
            if (pos >= text.length() || !isDigit(text.charAt(pos))) {
                throw error("expected a digit in the exponent");
            }
            digits();
        }
        String literal = text.substring(start, pos);
        if (!integer) {
            double d = Double.parseDouble(literal);
            if (Double.isInfinite(d)) {
                throw error("a number out of range");
            }
            return d;
        }
        BigInteger big = new BigInteger(literal);
        if (big.compareTo(LONG_MIN) >= 0 && big.compareTo(LONG_MAX) <= 0) {
            return big.longValue();
        }
        return big;
    }

    private void digits() {
        while (pos < text.length() && isDigit(text.charAt(pos))) {
            pos++;
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    // -- writing --------------------------------------------------------------------------

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote((String) value, out);
        } else if (value instanceof Boolean) {
            out.append(value.toString());
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new JsonException("JSON has no NaN or infinity: " + d);
            }
            out.append(Double.toString(d)); // keeps a fraction or exponent: stays a double
        } else if (value instanceof Number) {
            out.append(value.toString()); // Long, Integer, BigInteger, BigDecimal: as they are
        } else if (value instanceof Map) {
            out.append('{');
            Iterator<? extends Map.Entry<?, ?>> it = ((Map<?, ?>) value).entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> entry = it.next();
                if (!(entry.getKey() instanceof String)) {
                    throw new JsonException("an object key that is not a string: " + entry.getKey());
                }
                quote((String) entry.getKey(), out);
                out.append(':');
                write(entry.getValue(), out);
                if (it.hasNext()) {
                    out.append(',');
                }
            }
            out.append('}');
        } else if (value instanceof Iterable) {
            out.append('[');
            Iterator<?> it = ((Iterable<?>) value).iterator();
            while (it.hasNext()) {
                write(it.next(), out);
                if (it.hasNext()) {
                    out.append(',');
                }
            }
            out.append(']');
        } else {
            throw new JsonException("cannot encode a " + value.getClass().getName() + " as JSON");
        }
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    // Control characters, and the line separators some readers split on.
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    // -- small typed accessors, for code that reads commands and messages ------------------

    /** {@code value} as an object, or an empty one when it is absent or not an object. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object value) {
        return value instanceof Map ? (Map<String, Object>) value : new LinkedHashMap<String, Object>();
    }

    /** {@code value} as a string, or null. */
    public static String string(Object value) {
        return value instanceof String ? (String) value : null;
    }

    /** A new object from alternating keys and values: {@code Json.obj("a", 1, "b", x)}. */
    public static Map<String, Object> obj(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<String, Object>();
        for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }
}
