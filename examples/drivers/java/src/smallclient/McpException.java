package smallclient;

/** The server answered a request with a JSON-RPC error. */
public class McpException extends Exception {
    private static final long serialVersionUID = 1L;

    public final long code;
    public final transient Object data;

    public McpException(long code, String message, Object data) {
        super(message);
        this.code = code;
        this.data = data;
    }
}
