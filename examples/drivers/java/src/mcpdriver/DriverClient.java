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
     * stops a server process the client spawned, and makes pending calls fail. Called once,
     * also when {@code connect} never was.
     */
    void close() throws Exception;

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
    }
}
