package mcpdriver;

import java.util.List;
import java.util.Map;

/**
 * The one interface to implement for your own MCP client: the driver ({@link Driver}) calls
 * these methods for the harness's commands, each on a thread of its own (commands overlap).
 *
 * <p>Values are plain JSON values as {@link Json} reads them: return what your client handed
 * to its application, converted to maps and lists (not what was on the wire: the harness
 * compares the two). A tool result with {@code isError: true} is a value, not an exception.
 *
 * <p>Failures: throw a {@link DriverException} with the right kind when you can tell (a
 * JSON-RPC error from the server is {@code protocol} with its code). Anything else is mapped
 * by {@link Driver#errorOf}: a {@code java.net.SocketTimeoutException} or
 * {@code java.util.concurrent.TimeoutException} is {@code timeout}, any other
 * {@code IOException} is {@code transport}, the rest {@code other}.
 *
 * <p>Cancellation: when the harness cancels a command, the driver interrupts the thread that
 * runs it. Let your client react as an application's cancellation would (send
 * {@code notifications/cancelled}) and throw; an {@code InterruptedException} is fine.
 */
public interface DriverClient {
    /** {@code {"name": ..., "version": ...}} of the client under test, for the report. */
    Map<String, Object> info();

    /** The hello's {@code supports}: transports, features and revisions the client really has. */
    List<String> supports();

    /**
     * Connects and initializes. {@code transport} is the command's transport object
     * ({@code type} "stdio" with {@code command} and {@code env}, or "http" with {@code url} and
     * {@code headers}). Returns {@code {"protocolVersion": ..., "serverInfo": {...}}} as
     * negotiated.
     */
    Map<String, Object> connect(Map<String, Object> transport, ConnectOptions options)
            throws Exception;

    /**
     * One page of tools: the ListToolsResult for {@code cursor} (null for the first page). The
     * driver follows {@code nextCursor}; a client that pages by itself returns everything with
     * no {@code nextCursor}.
     */
    Map<String, Object> listTools(String cursor) throws Exception;

    /**
     * Calls a tool; returns the CallToolResult. {@code timeoutMs} is this call's own budget
     * (null: the connect budget). With {@code progress}, ask for progress notifications and
     * pass each one to {@link Events#notification}.
     */
    Map<String, Object> callTool(
            String name, Map<String, Object> arguments, Long timeoutMs, boolean progress)
            throws Exception;

    /** One page of resources, like {@link #listTools}. */
    Map<String, Object> listResources(String cursor) throws Exception;

    /** The ReadResourceResult. */
    Map<String, Object> readResource(String uri) throws Exception;

    /** One page of prompts, like {@link #listTools}. */
    Map<String, Object> listPrompts(String cursor) throws Exception;

    /** The GetPromptResult; {@code arguments} maps names to strings. */
    Map<String, Object> getPrompt(String name, Map<String, Object> arguments) throws Exception;

    /** Sends a ping and waits for its answer. */
    void ping() throws Exception;

    /**
     * Ends the session the way your application would (for Streamable HTTP, the DELETE),
     * stops a server process the client spawned, and makes pending calls fail. Called at the
     * end, also when {@code connect} never was; with {@link #reusable}, also for a
     * {@code reset}, after which the next {@code connect} must start a new client instance.
     */
    void close() throws Exception;

    // -- driver protocol 1.1: optional operations. The harness sends one only when
    // supports() names it ("set_log_level", "subscribe_resource", "complete",
    // "list_resource_templates", "set_roots", "tasks", "listen"); the defaults refuse.
    // Do not check the server's capabilities here: call the client, and if it refuses
    // locally, throw DriverException.unsupported with its message.

    /** Whether the harness may keep this process across scenarios (close, then connect again). */
    default boolean reusable() {
        return false;
    }

    /** {@code logging/setLevel}. */
    default void setLogLevel(String level) throws Exception {
        throw DriverException.unsupported("set_log_level is not implemented");
    }

    /** {@code resources/subscribe}; later updates go to {@link Events#notification}. */
    default void subscribeResource(String uri) throws Exception {
        throw DriverException.unsupported("subscribe_resource is not implemented");
    }

    /** {@code resources/unsubscribe}. */
    default void unsubscribeResource(String uri) throws Exception {
        throw DriverException.unsupported("unsubscribe_resource is not implemented");
    }

    /** {@code completion/complete}; {@code context} may be null. Returns the CompleteResult. */
    default Map<String, Object> complete(
            Map<String, Object> ref, Map<String, Object> argument, Map<String, Object> context)
            throws Exception {
        throw DriverException.unsupported("complete is not implemented");
    }

    /** One page of resource templates, like {@link #listTools}. */
    default Map<String, Object> listResourceTemplates(String cursor) throws Exception {
        throw DriverException.unsupported("list_resource_templates is not implemented");
    }

    /** The application changed its roots: the client takes them (and says so, if it does). */
    default void setRoots(List<Object> roots) throws Exception {
        throw DriverException.unsupported("set_roots is not implemented");
    }

    /** A task-augmented {@code tools/call} ({@code task} such as {"ttl": 60000}). */
    default Map<String, Object> callToolAsTask(
            String name, Map<String, Object> arguments, Map<String, Object> task, Long timeoutMs)
            throws Exception {
        throw DriverException.unsupported("tasks are not implemented");
    }

    /** {@code tasks/get}: the Task. */
    default Map<String, Object> getTask(String taskId) throws Exception {
        throw DriverException.unsupported("tasks are not implemented");
    }

    /** {@code tasks/result}: the task's CallToolResult. */
    default Map<String, Object> taskResult(String taskId) throws Exception {
        throw DriverException.unsupported("tasks are not implemented");
    }

    /** {@code tasks/cancel}: the Task after cancellation. */
    default Map<String, Object> cancelTask(String taskId) throws Exception {
        throw DriverException.unsupported("tasks are not implemented");
    }

    /**
     * {@code subscriptions/listen} (2026-07-28) with this filter; returns the acknowledged
     * {@code {"notifications": {...}}}. Report its course with {@link Events#subscription}.
     */
    default Map<String, Object> listen(Map<String, Object> notifications) throws Exception {
        throw DriverException.unsupported("listen is not implemented");
    }

    /** What the harness passes to {@link #connect}. */
    final class ConnectOptions {
        /** The revision the client should prefer, or null for its own choice. */
        public final String protocolVersion;
        /** The budget for connecting and for each later request, in milliseconds. */
        public final long timeoutMs;
        /** Answers to server-to-client requests; declare a capability only if it has one. */
        public final Handlers handlers;
        /** Where notifications the client surfaces go. */
        public final Events events;

        public ConnectOptions(String protocolVersion, long timeoutMs, Handlers handlers, Events events) {
            this.protocolVersion = protocolVersion;
            this.timeoutMs = timeoutMs;
            this.handlers = handlers;
            this.events = events;
        }
    }

    /**
     * The harness's answers for requests the server sends to the client. {@code hasX()} false
     * means the client has no answer: it must not declare that capability.
     */
    interface Handlers {
        boolean hasSampling();

        boolean hasElicitation();

        boolean hasRoots();

        /** The CreateMessageResult for a {@code sampling/createMessage} request's params. */
        Map<String, Object> createMessage(Map<String, Object> params);

        /** The ElicitResult for an {@code elicitation/create} request's params. */
        Map<String, Object> elicit(Map<String, Object> params);

        /** The Root objects for {@code roots/list}. */
        List<Object> roots();
    }

    /** What the client surfaces to its application; each call writes one event line. */
    interface Events {
        /** A server notification (list changes, log messages, progress, resource updates). */
        void notification(String method, Map<String, Object> params);

        /** Anything else worth seeing in a report. */
        void log(String text);

        /**
         * A listen subscription's course (1.1): {@code state} "acknowledged" (with the
         * acknowledged {@code notifications}), "ended" ({@code reason} "result" or "closed")
         * or "error" ({@code message}); the fields go into the event as they are.
         */
        void subscription(Map<String, Object> fields);
    }
}
