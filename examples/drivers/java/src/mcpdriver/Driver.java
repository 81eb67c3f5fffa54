package mcpdriver;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The driver loop of driver protocol 1.1 (docs/driver-protocol.md) around one
 * {@link DriverClient}: the hello, one thread per command (commands overlap), exactly one
 * reply per command, events, cancellation by interrupt, close, and (when the client is
 * {@link DriverClient#reusable}) reset. The 1.1 operations reach the client only when its
 * {@code supports()} names them, so a client that implements none is a v1 client.
 *
 * <pre>
 *   public static void main(String[] args) { Driver.run(new MyClientAdapter()); }
 * </pre>
 */
public final class Driver {
    public static final String PROTOCOL = "mcp-testbench-driver/1.1";
    static final String CANCELLED = "cancelled by the harness";
    private static final int MAX_PAGES = 1000;

    private final DriverClient client;
    private final OutputStream out;
    private final Map<Object, Thread> running = new ConcurrentHashMap<Object, Thread>();
    private final Set<Object> cancelled = Collections.newSetFromMap(new ConcurrentHashMap<Object, Boolean>());
    // Bumped by reset: events of a client thrown away are not written any more.
    private final AtomicInteger generation = new AtomicInteger();

    private Driver(DriverClient client, OutputStream out) {
        this.client = client;
        this.out = out;
    }

    /** Runs the driver on this process's stdin and stdout until close or end of input; exits 0. */
    public static void run(DriverClient client) {
        // stdout carries protocol lines only: keep it for the driver, and point System.out at
        // stderr so that a stray println from any library cannot corrupt the stream.
        OutputStream stdout = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        Driver driver = new Driver(client, stdout);
        int status = driver.loop();
        System.exit(status);
    }

    /** Writes one line; lines from several threads never interleave. */
    public synchronized void write(Map<String, Object> message) {
        try {
            out.write((Json.write(message) + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            log("stdout is gone: " + e);
        }
    }

    static void log(String text) {
        System.err.println("java-driver: " + text);
    }

    private int loop() {
        write(Json.obj("hello", PROTOCOL, "client", client.info(), "supports", client.supports(),
                "reuse", client.reusable()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Object closeId = null;
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.trim().isEmpty()) {
                    continue;
                }
                Map<String, Object> command;
                try {
                    Object parsed = Json.parse(line);
                    if (!(parsed instanceof Map) || !((Map<?, ?>) parsed).containsKey("id")) {
                        throw new Json.JsonException("not a command object");
                    }
                    command = Json.object(parsed);
                } catch (Json.JsonException e) {
                    log("ignored a line that is not a command (" + e.getMessage() + "): "
                            + line.substring(0, Math.min(200, line.length())));
                    continue;
                }
                if ("close".equals(command.get("op"))) {
                    closeId = command.get("id");
                    break;
                }
                start(command);
            }
        } catch (IOException e) {
            log("stdin failed: " + e);
        }
        // `close`, or the end of stdin (the harness is gone): release everything, exit 0.
        try {
            client.close(); // pending requests fail now, so their threads reply and end
        } catch (Throwable e) {
            log("close failed: " + e);
        }
        long deadline = System.currentTimeMillis() + 5000;
        for (Thread thread : new ArrayList<Thread>(running.values())) {
            try {
                thread.join(Math.max(1, deadline - System.currentTimeMillis()));
            } catch (InterruptedException e) {
                break;
            }
        }
        if (closeId != null) {
            write(Json.obj("id", closeId, "ok", true, "value", new LinkedHashMap<String, Object>()));
        }
        return 0;
    }

    private void start(final Map<String, Object> command) {
        final Object id = command.get("id");
        if ("cancel".equals(command.get("op"))) {
            // Interrupting the target's thread makes the client cancel its request; the target
            // still replies, from its own thread. Unknown or finished: a no-op.
            Object target = command.get("target");
            Thread thread = target == null ? null : running.get(target);
            if (thread != null) {
                cancelled.add(target);
                thread.interrupt();
            }
            write(Json.obj("id", id, "ok", true, "value", new LinkedHashMap<String, Object>()));
            return;
        }
        Thread thread = new Thread(new Runnable() {
            @Override
            public void run() {
                reply(id, command);
            }
        }, "command-" + id);
        thread.setDaemon(true);
        running.put(id, thread);
        thread.start();
    }

    /** Carries out one command and writes exactly one reply for it, whatever happens. */
    private void reply(Object id, Map<String, Object> command) {
        Map<String, Object> message;
        try {
            Object value = perform(command);
            message = Json.obj("id", id, "ok", true, "value", value == null ? new LinkedHashMap<String, Object>() : value);
        } catch (Throwable e) {
            message = Json.obj("id", id, "ok", false, "error", errorOf(e, cancelled.contains(id)));
        }
        write(message);
        // Only now: close waits for the running commands, whose replies come before its own.
        running.remove(id);
        cancelled.remove(id);
    }

    private Object perform(Map<String, Object> command) throws Exception {
        String op = Json.string(command.get("op"));
        if ("connect".equals(op)) {
            Map<String, Object> transport = Json.object(command.get("transport"));
            Object timeout = command.get("timeoutMs");
            long timeoutMs = timeout instanceof Number ? ((Number) timeout).longValue() : 10000;
            DriverClient.ConnectOptions options = new DriverClient.ConnectOptions(
                    Json.string(command.get("protocolVersion")), timeoutMs,
                    new CannedHandlers(Json.object(command.get("handlers"))),
                    new EventLines(generation.get()));
            return client.connect(transport, options);
        }
        if ("list_tools".equals(op)) {
            return allPages("tools", new Page() {
                public Map<String, Object> get(String cursor) throws Exception {
                    return client.listTools(cursor);
                }
            });
        }
        if ("call_tool".equals(op) && command.get("task") != null) { // 1.1: a task-augmented call
            Object timeout = command.get("timeoutMs");
            return client.callToolAsTask(Json.string(command.get("name")), Json.object(command.get("arguments")),
                    Json.object(command.get("task")),
                    timeout instanceof Number ? ((Number) timeout).longValue() : null);
        }
        if ("call_tool".equals(op)) {
            Object timeout = command.get("timeoutMs");
            return client.callTool(Json.string(command.get("name")), Json.object(command.get("arguments")),
                    timeout instanceof Number ? ((Number) timeout).longValue() : null,
                    Boolean.TRUE.equals(command.get("progress")));
        }
        if ("list_resources".equals(op)) {
            return allPages("resources", new Page() {
                public Map<String, Object> get(String cursor) throws Exception {
                    return client.listResources(cursor);
                }
            });
        }
        if ("read_resource".equals(op)) {
            return client.readResource(Json.string(command.get("uri")));
        }
        if ("list_prompts".equals(op)) {
            return allPages("prompts", new Page() {
                public Map<String, Object> get(String cursor) throws Exception {
                    return client.listPrompts(cursor);
                }
            });
        }
        if ("get_prompt".equals(op)) {
            return client.getPrompt(Json.string(command.get("name")), Json.object(command.get("arguments")));
        }
        if ("ping".equals(op)) {
            client.ping();
            return new LinkedHashMap<String, Object>();
        }
        return perform11(op, command);
    }

    /** The operations of protocol 1.1: passed on to the client, which may refuse them. */
    private Object perform11(String op, Map<String, Object> command) throws Exception {
        Map<String, Object> empty = new LinkedHashMap<String, Object>();
        if ("set_log_level".equals(op)) {
            client.setLogLevel(Json.string(command.get("level")));
            return empty;
        }
        if ("subscribe_resource".equals(op)) {
            client.subscribeResource(Json.string(command.get("uri")));
            return empty;
        }
        if ("unsubscribe_resource".equals(op)) {
            client.unsubscribeResource(Json.string(command.get("uri")));
            return empty;
        }
        if ("complete".equals(op)) {
            Object context = command.get("context");
            return client.complete(Json.object(command.get("ref")), Json.object(command.get("argument")),
                    context == null ? null : Json.object(context));
        }
        if ("list_resource_templates".equals(op)) {
            return allPages("resourceTemplates", new Page() {
                public Map<String, Object> get(String cursor) throws Exception {
                    return client.listResourceTemplates(cursor);
                }
            });
        }
        if ("set_roots".equals(op)) {
            Object roots = command.get("roots");
            client.setRoots(roots instanceof List ? new ArrayList<Object>((List<?>) roots) : new ArrayList<Object>());
            return empty;
        }
        if ("get_task".equals(op)) {
            return client.getTask(Json.string(command.get("taskId")));
        }
        if ("task_result".equals(op)) {
            return client.taskResult(Json.string(command.get("taskId")));
        }
        if ("cancel_task".equals(op)) {
            return client.cancelTask(Json.string(command.get("taskId")));
        }
        if ("listen".equals(op)) {
            return client.listen(Json.object(command.get("notifications")));
        }
        if ("reset".equals(op) && client.reusable()) {
            // As close does, but the process stays: the next connect starts a new client.
            generation.incrementAndGet();
            client.close();
            long deadline = System.currentTimeMillis() + 5000;
            for (Thread thread : new ArrayList<Thread>(running.values())) {
                if (thread != Thread.currentThread()) {
                    thread.join(Math.max(1, deadline - System.currentTimeMillis()));
                }
            }
            return empty;
        }
        throw DriverException.unsupported("this driver has no op " + Json.write(command.get("op")));
    }

    private interface Page {
        Map<String, Object> get(String cursor) throws Exception;
    }

    /** Follows nextCursor verbatim, as an application would, and joins the pages. */
    private static Map<String, Object> allPages(String key, Page page) throws Exception {
        List<Object> items = new ArrayList<Object>();
        String cursor = null;
        for (int n = 0; n < MAX_PAGES; n++) {
            Map<String, Object> result = page.get(cursor);
            Object list = result.get(key);
            if (list instanceof List) {
                items.addAll((List<?>) list);
            }
            Object next = result.get("nextCursor");
            if (next == null) {
                return Json.obj(key, items);
            }
            if (!(next instanceof String)) {
                throw DriverException.other("nextCursor is not a string: " + Json.write(next), null);
            }
            cursor = (String) next;
        }
        throw DriverException.other("still a nextCursor after " + MAX_PAGES + " pages", null);
    }

    /**
     * The reply's error for what a command threw: a {@link DriverException} keeps its kind;
     * a cancelled command is {@code other}; time-outs are {@code timeout}; other I/O
     * failures {@code transport}; everything else {@code other}.
     */
    static Map<String, Object> errorOf(Throwable e, boolean wasCancelled) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        String kind = "other";
        Long code = null;
        if (e instanceof DriverException) {
            kind = ((DriverException) e).kind;
            code = ((DriverException) e).code;
        } else if (wasCancelled || e instanceof InterruptedException) {
            message = CANCELLED;
        } else if (e instanceof SocketTimeoutException || e instanceof TimeoutException) {
            kind = "timeout";
        } else if (e instanceof IOException) {
            kind = "transport";
        } else {
            message = e.getClass().getSimpleName() + ": " + message;
            log("command failed: " + e);
        }
        if (wasCancelled && !"other".equals(kind)) {
            kind = "other";
            message = CANCELLED;
        }
        return Json.obj("kind", kind, "code", code, "message", message);
    }

    /** The harness's canned answers (the connect command's {@code handlers}). */
    private static final class CannedHandlers implements DriverClient.Handlers {
        private final Map<String, Object> spec;

        CannedHandlers(Map<String, Object> spec) {
            this.spec = spec;
        }

        public boolean hasSampling() {
            return spec.get("sampling") != null;
        }

        public boolean hasElicitation() {
            return spec.get("elicitation") != null;
        }

        public boolean hasRoots() {
            return spec.get("roots") != null;
        }

        public Map<String, Object> createMessage(Map<String, Object> params) {
            return Json.object(spec.get("sampling"));
        }

        public Map<String, Object> elicit(Map<String, Object> params) {
            return Json.object(spec.get("elicitation"));
        }

        @SuppressWarnings("unchecked")
        public List<Object> roots() {
            Object roots = spec.get("roots");
            return roots instanceof List ? (List<Object>) roots : new ArrayList<Object>();
        }
    }

    /** Events become lines without an id; none from a client that a reset threw away. */
    private final class EventLines implements DriverClient.Events {
        private final int born;

        EventLines(int born) {
            this.born = born;
        }

        private void event(Map<String, Object> line) {
            if (born == generation.get()) {
                write(line);
            }
        }

        public void notification(String method, Map<String, Object> params) {
            event(Json.obj("event", "notification", "method", method, "params",
                    params == null ? new LinkedHashMap<String, Object>() : params));
        }

        public void log(String text) {
            event(Json.obj("event", "log", "text", text));
        }

        public void subscription(Map<String, Object> fields) {
            Map<String, Object> line = Json.obj("event", "subscription");
            line.putAll(fields);
            event(line);
        }
    }
}
