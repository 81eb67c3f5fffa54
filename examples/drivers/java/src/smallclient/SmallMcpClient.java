package smallclient;

import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import mcpdriver.Json;

/**
 * A small MCP client, written from the specification: JSON-RPC requests with ids, matched
 * responses, the initialize handshake, answers to the server's requests, and notifications
 * handed to a listener. Transports: {@link StdioTransport}, {@link HttpTransport}.
 */
public final class SmallMcpClient implements Transport.Receiver {
    public static final List<String> VERSIONS =
            Arrays.asList("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25");
    public static final String LATEST = "2025-11-25";

    /** What the application does with what the server sends on its own. */
    public interface Listener {
        void notification(String method, Map<String, Object> params);

        /** The result for a server request; throw McpException to answer with an error. */
        Map<String, Object> request(String method, Map<String, Object> params) throws McpException;
    }

    private final Transport transport;
    private final Listener listener;
    private final long timeoutMs;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, CompletableFuture<Map<String, Object>>> pending =
            new ConcurrentHashMap<Long, CompletableFuture<Map<String, Object>>>();
    private volatile String closedBecause;
    private Map<String, Object> serverInfo = new LinkedHashMap<String, Object>();
    private Map<String, Object> serverCapabilities = new LinkedHashMap<String, Object>();
    private String protocolVersion;

    public SmallMcpClient(Transport transport, Listener listener, long timeoutMs) {
        this.transport = transport;
        this.listener = listener;
        this.timeoutMs = timeoutMs;
    }

    /** Starts the transport and runs the initialize handshake. */
    public void connect(Map<String, Object> clientInfo, Map<String, Object> capabilities, String version)
            throws IOException, McpException, TimeoutException, InterruptedException {
        transport.start(this);
        Map<String, Object> result = request("initialize", Json.obj(
                "protocolVersion", version, "capabilities", capabilities, "clientInfo", clientInfo), null);
        String chosen = Json.string(result.get("protocolVersion"));
        if (chosen == null || !VERSIONS.contains(chosen)) {
            close();
            throw new IOException("the server chose protocol version " + chosen + ", which this client does not speak");
        }
        protocolVersion = chosen;
        serverInfo = Json.object(result.get("serverInfo"));
        serverCapabilities = Json.object(result.get("capabilities"));
        transport.initialized(chosen);
        notify("notifications/initialized", null);
    }

    public String protocolVersion() {
        return protocolVersion;
    }

    public Map<String, Object> serverInfo() {
        return serverInfo;
    }

    public Map<String, Object> serverCapabilities() {
        return serverCapabilities;
    }

    /** Sends a request and waits for its response (at most {@code timeout} ms; null: the default). */
    public Map<String, Object> request(String method, Map<String, Object> params, Long timeout)
            throws IOException, McpException, TimeoutException, InterruptedException {
        if (closedBecause != null) {
            throw new IOException("connection closed: " + closedBecause);
        }
        long id = nextId.getAndIncrement();
        CompletableFuture<Map<String, Object>> answer = new CompletableFuture<Map<String, Object>>();
        pending.put(id, answer);
        Map<String, Object> message = Json.obj("jsonrpc", "2.0", "id", id, "method", method);
        if (params != null) {
            message.put("params", params);
        }
        Map<String, Object> response;
        try {
            transport.send(message);
            response = answer.get(timeout == null ? timeoutMs : timeout, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            cancel(id, method, "timed out");
            throw new TimeoutException(method + " got no response in " + (timeout == null ? timeoutMs : timeout) + " ms");
        } catch (InterruptedException e) {
            cancel(id, method, "cancelled by the application");
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof IOException ? (IOException) cause : new IOException(cause);
        } finally {
            pending.remove(id);
        }
        if (response.containsKey("error")) {
            Map<String, Object> error = Json.object(response.get("error"));
            Object code = error.get("code");
            throw new McpException(code instanceof Number ? ((Number) code).longValue() : -32603,
                    String.valueOf(error.get("message")), error.get("data"));
        }
        return Json.object(response.get("result"));
    }

    private void cancel(long id, String method, String reason) {
        if ("initialize".equals(method)) {
            return; // the spec: the initialize request must not be cancelled
        }
        try {
            notify("notifications/cancelled", Json.obj("requestId", id, "reason", reason));
        } catch (IOException e) {
            System.err.println("small-client: could not send the cancellation: " + e);
        }
    }

    public void notify(String method, Map<String, Object> params) throws IOException {
        Map<String, Object> message = Json.obj("jsonrpc", "2.0", "method", method);
        if (params != null) {
            message.put("params", params);
        }
        transport.send(message);
    }

    public void close() {
        transport.close();
        closed("the client was closed");
    }

    // -- Transport.Receiver ------------------------------------------------------------------

    @Override
    public void message(final Map<String, Object> message) {
        final Object method = message.get("method");
        if (method instanceof String && message.containsKey("id")) {
            // A request from the server: answer it on a thread of its own, never the reader's.
            Thread worker = new Thread(new Runnable() {
                @Override
                public void run() {
                    answer(message.get("id"), (String) method, Json.object(message.get("params")));
                }
            }, "server-request");
            worker.setDaemon(true);
            worker.start();
        } else if (method instanceof String) {
            listener.notification((String) method, Json.object(message.get("params")));
        } else if (message.get("id") instanceof Long) {
            CompletableFuture<Map<String, Object>> answer = pending.get(message.get("id"));
            if (answer != null) {
                answer.complete(message);
            } else {
                System.err.println("small-client: a response for no pending request: " + Json.write(message));
            }
        } else {
            System.err.println("small-client: ignored a message: " + Json.write(message));
        }
    }

    private void answer(Object id, String method, Map<String, Object> params) {
        Map<String, Object> reply = Json.obj("jsonrpc", "2.0", "id", id);
        try {
            if ("ping".equals(method)) {
                reply.put("result", new LinkedHashMap<String, Object>());
            } else {
                reply.put("result", listener.request(method, params));
            }
        } catch (McpException e) {
            reply.put("error", Json.obj("code", e.code, "message", e.getMessage()));
        } catch (RuntimeException e) {
            reply.put("error", Json.obj("code", -32603L, "message", "internal error: " + e));
        }
        try {
            transport.send(reply);
        } catch (IOException e) {
            System.err.println("small-client: could not answer " + method + ": " + e);
        }
    }

    @Override
    public void failed(Object id, IOException error) {
        CompletableFuture<Map<String, Object>> answer = pending.get(id);
        if (answer != null) {
            answer.completeExceptionally(error);
        }
    }

    @Override
    public void closed(String why) {
        if (closedBecause == null) {
            closedBecause = why;
        }
        for (CompletableFuture<Map<String, Object>> answer : pending.values()) {
            answer.completeExceptionally(new IOException("connection closed: " + why));
        }
    }
}
