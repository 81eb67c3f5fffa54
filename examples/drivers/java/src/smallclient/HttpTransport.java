package smallclient;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import mcpdriver.Json;

/**
 * Streamable HTTP with HttpURLConnection: every message is a POST; the answer is a JSON body
 * or an SSE stream; the session id from the initialize response goes on every later request.
 */
public final class HttpTransport implements Transport {
    private final String url;
    private final Map<String, String> headers;
    private final int timeoutMs;
    private final Set<HttpURLConnection> open =
            Collections.newSetFromMap(new ConcurrentHashMap<HttpURLConnection, Boolean>());
    private Receiver receiver;
    private volatile String sessionId;
    private volatile String protocolVersion;

    public HttpTransport(String url, Map<String, String> headers, int timeoutMs) {
        this.url = url;
        this.headers = headers;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public void start(Receiver receiver) {
        this.receiver = receiver;
    }

    @Override
    public void initialized(String version) {
        // The MCP-Protocol-Version header exists from 2025-06-18 on.
        if (version.compareTo("2025-06-18") >= 0) {
            protocolVersion = version;
        }
    }

    private HttpURLConnection open(String method) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod(method);
        c.setConnectTimeout(timeoutMs);
        c.setReadTimeout(timeoutMs);
        for (Map.Entry<String, String> h : headers.entrySet()) {
            c.setRequestProperty(h.getKey(), h.getValue());
        }
        if (sessionId != null) {
            c.setRequestProperty("Mcp-Session-Id", sessionId);
        }
        if (protocolVersion != null) {
            c.setRequestProperty("MCP-Protocol-Version", protocolVersion);
        }
        return c;
    }

    @Override
    public void send(final Map<String, Object> message) throws IOException {
        if (!(message.containsKey("method") && message.containsKey("id"))) {
            post(message); // notifications and responses: the answer is a 202
            return;
        }
        // A request: POST it on a thread of its own, so that the caller can wait for the
        // response with its own time-out (and be interrupted) whatever the server does.
        Thread poster = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    post(message);
                } catch (IOException e) {
                    receiver.failed(message.get("id"), e);
                }
            }
        }, "http-post");
        poster.setDaemon(true);
        poster.start();
    }

    private void post(Map<String, Object> message) throws IOException {
        byte[] body = Json.write(message).getBytes(StandardCharsets.UTF_8);
        final HttpURLConnection c = open("POST");
        c.setDoOutput(true);
        c.setRequestProperty("Content-Type", "application/json");
        c.setRequestProperty("Accept", "application/json, text/event-stream");
        c.setFixedLengthStreamingMode(body.length);
        OutputStream out = c.getOutputStream();
        out.write(body);
        out.close();
        int status = c.getResponseCode();
        String session = c.getHeaderField("Mcp-Session-Id");
        if (session != null && sessionId == null) {
            sessionId = session;
        }
        if (status == 202) {
            c.disconnect();
            return;
        }
        if (status >= 400) {
            String text = readAll(c.getErrorStream());
            c.disconnect();
            throw new IOException("HTTP " + status + " from " + url + ": " + text);
        }
        String type = c.getContentType() == null ? "" : c.getContentType().toLowerCase();
        if (type.startsWith("text/event-stream")) {
            // Read the stream on a thread of its own: the caller waits for its response.
            open.add(c);
            Thread reader = new Thread(new Runnable() {
                @Override
                public void run() {
                    try {
                        readEvents(c.getInputStream());
                    } catch (IOException e) {
                        System.err.println("small-client: SSE stream ended: " + e);
                    } finally {
                        open.remove(c);
                        c.disconnect();
                    }
                }
            }, "sse-reader");
            reader.setDaemon(true);
            reader.start();
            return;
        }
        String text = readAll(c.getInputStream());
        c.disconnect();
        if (text.trim().isEmpty()) {
            return;
        }
        deliver(text);
    }

    private void deliver(String data) {
        Object message;
        try {
            message = Json.parse(data);
        } catch (Json.JsonException e) {
            System.err.println("small-client: bad JSON from server: " + e.getMessage());
            return;
        }
        if (message instanceof Map) {
            receiver.message(Json.object(message));
        } else {
            System.err.println("small-client: ignored a non-object message: " + data);
        }
    }

    /** text/event-stream: "data:" lines are joined; a blank line ends an event. */
    private void readEvents(InputStream in) throws IOException {
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        StringBuilder data = new StringBuilder();
        String line;
        while ((line = lines.readLine()) != null) {
            if (line.isEmpty()) {
                if (data.length() > 0) {
                    deliver(data.toString());
                    data.setLength(0);
                }
            } else if (line.startsWith("data:")) {
                String value = line.substring(5);
                if (value.startsWith(" ")) {
                    value = value.substring(1);
                }
                if (data.length() > 0) {
                    data.append('\n');
                }
                data.append(value);
            }
            // "event:", "id:", "retry:" and comments are not needed by this client.
        }
    }

    private static String readAll(InputStream in) throws IOException {
        if (in == null) {
            return "";
        }
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        int n;
        while ((n = in.read(chunk)) > 0) {
            buffer.write(chunk, 0, n);
        }
        in.close();
        return new String(buffer.toByteArray(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        if (sessionId != null) {
            try {
                HttpURLConnection c = open("DELETE"); // end the session
                c.getResponseCode();
                c.disconnect();
            } catch (IOException e) {
                System.err.println("small-client: DELETE failed: " + e);
            }
        }
        for (HttpURLConnection c : open) {
            c.disconnect();
        }
        if (receiver != null) {
            receiver.closed("the client closed the connection");
        }
    }
}
