package mcpdriver;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Checks the JSON reader and writer by hand or from a test: each stdin line is parsed and
 * written back as {@code ok <json>} or {@code error <why>}, one line each (UTF-8).
 *
 * <pre>  echo '[1, 1.0, 12345678901234567890, "\ud83d\ude00"]' | java -cp build mcpdriver.JsonCheck</pre>
 */
public final class JsonCheck {
    private JsonCheck() {
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            try {
                out.println("ok " + Json.write(Json.parse(line)));
            } catch (Json.JsonException e) {
                out.println("error " + e.getMessage());
            }
        }
    }
}
